// The namespace page's Dependencies tab: the graph across flows (GET /namespaces/{namespace}/dependencies): every
// flow of the namespace, and the flows of other namespaces that call, trigger or are called by them.
import { api } from '../../../api';
import { ErrorBanner } from '../../../components/ErrorBanner';
import { DependencyGraphPanel } from '../../../components/graph/DependencyGraphPanel';
import { useApi } from '../../../hooks';
import type { NamespaceTabProps } from '../tabs';

export function NamespaceDependencies({ namespace }: NamespaceTabProps) {
  const deps = useApi((signal) => api.namespaceDependencies(namespace, signal), [namespace]);
  return (
    <div>
      <ErrorBanner error={deps.error} onRetry={deps.reload} />
      {deps.loading && !deps.data && <p className="muted" role="status">Loading dependencies…</p>}
      {deps.data && <DependencyGraphPanel graph={deps.data} label="Namespace dependencies" />}
    </div>
  );
}
