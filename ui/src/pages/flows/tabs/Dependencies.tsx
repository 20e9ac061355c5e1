// The flow's Dependencies tab: the flows it calls or triggers and those that call or trigger it (one hop, or every
// flow reached with "Expand all"), from GET /flows/{namespace}/{id}/dependencies.
import { useEffect, useState } from 'react';
import { useSearchParams } from 'react-router';
import { api } from '../../../api';
import { ErrorBanner } from '../../../components/ErrorBanner';
import { DependencyGraphPanel } from '../../../components/graph/DependencyGraphPanel';
import { useApi } from '../../../hooks';
import type { FlowTabProps } from '../tabs';

export function FlowDependencies({ flow }: FlowTabProps) {
  const [params, setParams] = useSearchParams();
  // Kept here too: the box follows the click at once, the URL (for links and back) follows the box.
  const [expandAll, setExpandAll] = useState(params.get('expandAll') === 'true');
  useEffect(() => { setExpandAll(params.get('expandAll') === 'true'); }, [params]);
  const deps = useApi((signal) => api.flowDependencies(flow.namespace, flow.id, expandAll, signal), [flow.namespace, flow.id, expandAll]);
  return (
    <div>
      <div className="filters">
        <label className="field-inline">
          <input type="checkbox" checked={expandAll} onChange={(e) => {
            const on = e.target.checked;
            setExpandAll(on);
            setParams((p) => { if (on) p.set('expandAll', 'true'); else p.delete('expandAll'); return p; }, { replace: true });
          }} />
          Expand all (dependencies of dependencies)
        </label>
      </div>
      <ErrorBanner error={deps.error} onRetry={deps.reload} />
      {deps.loading && !deps.data && <p className="muted" role="status">Loading dependencies…</p>}
      {deps.data && <DependencyGraphPanel graph={deps.data} label="Flow dependencies" focus={flow} />}
    </div>
  );
}
