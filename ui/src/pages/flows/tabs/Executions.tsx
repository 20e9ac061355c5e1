// The flow's Executions tab: its executions, newest first, paged on the server, filtered by state (in the URL).
import { useSearchParams } from 'react-router';
import { api, type ExecutionSummary, type StateType } from '../../../api';
import { DateTime, formatDuration } from '../../../components/DateTime';
import { EmptyState } from '../../../components/EmptyState';
import { ErrorBanner } from '../../../components/ErrorBanner';
import { ExecutionLink } from '../../../components/ExecutionLink';
import { StateBadge } from '../../../components/StateBadge';
import { Table, usePaging, type Column } from '../../../components/Table';
import { useApi } from '../../../hooks';
import { STATE_ORDER } from '../../dashboard/Dashboard';
import type { FlowTabProps } from '../tabs';

const columns: Column<ExecutionSummary>[] = [
  { key: 'id', header: 'Id', render: (e) => <ExecutionLink namespace={e.namespace} flowId={e.flowId} id={e.id} /> },
  { key: 'state', header: 'State', render: (e) => <StateBadge state={e.state.current} /> },
  { key: 'start', header: 'Start date', render: (e) => <DateTime value={e.state.startDate} /> },
  { key: 'end', header: 'End date', render: (e) => <DateTime value={e.state.endDate} /> },
  { key: 'duration', header: 'Duration', render: (e) => formatDuration(e.state.duration) },
  { key: 'labels', header: 'Labels', render: (e) => (e.labels ?? []).map((l) => <span key={`${l.key}:${l.value}`} className="chip">{l.key}:{l.value}</span>) },
  { key: 'revision', header: 'Revision', className: 'num', render: (e) => e.flowRevision ?? '' },
];

export function FlowExecutions({ flow }: FlowTabProps) {
  const [params, setParams] = useSearchParams();
  const state = params.get('state') ?? '';
  const { page, size, setPaging } = usePaging();
  const list = useApi((signal) => api.flowExecutions(flow.namespace, flow.id, page, size, signal, (state || undefined) as StateType | undefined),
    [flow.namespace, flow.id, state, page, size]);
  return (
    <div>
      <div className="filters">
        <label className="field-inline">State
          <select value={state} onChange={(e) => { const n = new URLSearchParams(params); if (e.target.value) n.set('state', e.target.value); else n.delete('state'); n.delete('page'); setParams(n); }}>
            <option value="">All states</option>
            {STATE_ORDER.map((s) => <option key={s} value={s}>{s}</option>)}
          </select>
        </label>
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
