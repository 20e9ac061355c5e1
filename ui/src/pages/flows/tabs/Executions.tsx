// The flow's Executions tab: its executions, newest first, paged on the server, filtered by state (in the URL).
import { api, type StateType } from '../../../api';
import { EmptyState } from '../../../components/EmptyState';
import { ErrorBanner } from '../../../components/ErrorBanner';
import { StateSelect } from '../../../components/Filters';
import { executionColumns } from '../../../components/execution-columns';
import { Table, usePaging } from '../../../components/Table';
import { useApi, useUrlFilters } from '../../../hooks';
import type { FlowTabProps } from '../tabs';

const columns = executionColumns('id', 'state', 'start', 'end', 'duration', 'labels', 'revision');

export function FlowExecutions({ flow }: FlowTabProps) {
  const filters = useUrlFilters();
  const state = filters.value('state');
  const { page, size, setPaging } = usePaging();
  const list = useApi((signal) => api.flowExecutions(flow.namespace, flow.id, page, size, signal, (state || undefined) as StateType | undefined),
    [flow.namespace, flow.id, state, page, size]);
  return (
    <div>
      <div className="filters">
        <StateSelect filters={filters} />
      </div>
      <ErrorBanner error={list.error} onRetry={list.reload} />
      {list.data && (
        <Table label="Flow executions" columns={columns} rows={list.data.results} rowKey={(e) => e.id}
          paging={{ page, size, total: list.data.total, onChange: setPaging }}
          empty={<EmptyState title={state ? `No ${state} execution` : 'This flow has not run yet'} />} />
      )}
      {list.loading && !list.data && <p className="muted" role="status">Loading…</p>}
    </div>
  );
}
