// The execution's `metrics` tab: its metrics (GET /metrics/{id}: counters and timers of every task run attempt) as a
// table paged and sorted by the server.
import { api, type MetricEntry } from '../../../api';
import { EmptyState } from '../../../components/EmptyState';
import { ErrorBanner } from '../../../components/ErrorBanner';
import { Table, usePaging, type Column } from '../../../components/Table';
import { formatDuration } from '../../../components/DateTime';
import { useApi, useUrlFilters } from '../../../hooks';
import type { ExecutionTabProps } from '../tabs';

const SORTS: { value: string; label: string }[] = [
  { value: '', label: 'Task run order' },
  { value: 'name:asc', label: 'Name' },
  { value: 'taskId:asc', label: 'Task' },
  { value: 'value:desc', label: 'Value (largest first)' },
  { value: 'timestamp:desc', label: 'Newest first' },
];

const columns: Column<MetricEntry>[] = [
  { key: 'task', header: 'Task', render: (m) => <code>{m.taskId}</code> },
  { key: 'name', header: 'Name', render: (m) => m.name },
  { key: 'type', header: 'Type', render: (m) => m.type },
  { key: 'value', header: 'Value', className: 'num', render: (m) => (m.type === 'timer' ? formatDuration(m.value) : m.value.toLocaleString()) },
  { key: 'tags', header: 'Tags', render: (m) => Object.entries(m.tags).map(([k, v]) => <span key={k} className="chip">{k}:{v}</span>) },
  { key: 'time', header: 'Time', render: (m) => <time dateTime={m.timestamp}>{new Date(m.timestamp).toLocaleString()}</time> },
];

export function ExecutionMetrics({ execution }: ExecutionTabProps) {
  const filters = useUrlFilters();
  const sort = filters.value('sort');
  const { page, size, setPaging } = usePaging();
  const ended = execution.state.endDate ?? '';
  // Read again when the execution ends (its last attempts' metrics are recorded by then).
  const metrics = useApi((signal) => api.executionMetrics(execution.id, { page, size, sort: sort || undefined }, signal), [execution.id, page, size, sort, ended]);
  return (
    <div className="stack">
      <div className="filters">
        <label className="field-inline">Sort by
          <select value={sort} onChange={(e) => filters.set('sort', e.target.value)}>
            {SORTS.map((s) => <option key={s.value} value={s.value}>{s.label}</option>)}
          </select>
        </label>
      </div>
      <ErrorBanner error={metrics.error} onRetry={metrics.reload} />
      {metrics.data && (
        <Table label="Metrics" columns={columns} rows={metrics.data.results} rowKey={(m) => `${m.taskRunId}-${m.name}-${m.timestamp}-${m.value}`}
          paging={{ page, size, total: metrics.data.total, onChange: setPaging }} empty={<EmptyState title="This execution recorded no metrics" />} />
      )}
      {metrics.loading && !metrics.data && <p className="muted" role="status">Loading…</p>}
    </div>
  );
}
