// The namespace's Flows tab: its flows (child namespaces included, as Kestra's), paged on the server.
import { Link } from 'react-router';
import { api, type Flow } from '../../../api';
import { EmptyState } from '../../../components/EmptyState';
import { ErrorBanner } from '../../../components/ErrorBanner';
import { Table, usePaging, type Column } from '../../../components/Table';
import { useApi } from '../../../hooks';
import type { NamespaceTabProps } from '../tabs';
import { flowPath } from '../../../paths';

const columns: Column<Flow>[] = [
  { key: 'id', header: 'Id', render: (f) => <Link to={flowPath(f.namespace, f.id)}>{f.id}</Link> },
  { key: 'namespace', header: 'Namespace', render: (f) => f.namespace },
  { key: 'description', header: 'Description', render: (f) => (f.description ?? '').split('\n')[0] },
  { key: 'triggers', header: 'Triggers', render: (f) => (f.triggers ?? []).map((t) => t.id).join(', ') || <span className="muted">–</span> },
  { key: 'revision', header: 'Revision', className: 'num', render: (f) => f.revision },
];

export function NamespaceFlows({ namespace }: NamespaceTabProps) {
  const { page, size, setPaging } = usePaging();
  const flows = useApi((signal) => api.searchFlows({ namespace, page, size }, signal), [namespace, page, size]);
  return (
    <div>
      <ErrorBanner error={flows.error} onRetry={flows.reload} />
      {flows.data && (
        <Table label="Namespace flows" columns={columns} rows={flows.data.results} rowKey={(f) => `${f.namespace}.${f.id}`}
          paging={{ page, size, total: flows.data.total, onChange: setPaging }} empty={<EmptyState title="No flow in this namespace" />} />
      )}
      {flows.loading && !flows.data && <p className="muted" role="status">Loading…</p>}
    </div>
  );
}
