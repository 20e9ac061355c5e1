// THE table columns of an execution summary (id, flow, state, dates, duration, labels, revision), for every list of
// executions (executions page, flow tabs, namespace overview, dashboard): pick the ones a table shows with
// `executionColumns('id', 'state', ...)`.
import { Link } from 'react-router';
import type { ExecutionSummary } from '../api';
import { DateTime, formatDuration } from './DateTime';
import { ExecutionLink } from './ExecutionLink';
import { StateBadge } from './StateBadge';
import type { Column } from './Table';
import { flowPath } from '../paths';

const COLUMNS = {
  id: { key: 'id', header: 'Id', render: (e) => <ExecutionLink namespace={e.namespace} flowId={e.flowId} id={e.id} /> },
  flow: {
    key: 'flow', header: 'Flow', render: (e) => (
      <span><span className="muted">{e.namespace}.</span><Link to={flowPath(e.namespace, e.flowId, 'overview')}>{e.flowId}</Link></span>
    ),
  },
  state: { key: 'state', header: 'State', render: (e) => <StateBadge state={e.state.current} /> },
  start: { key: 'start', header: 'Start date', render: (e) => <DateTime value={e.state.startDate} /> },
  end: { key: 'end', header: 'End date', render: (e) => <DateTime value={e.state.endDate} /> },
  duration: { key: 'duration', header: 'Duration', render: (e) => formatDuration(e.state.duration) },
  labels: { key: 'labels', header: 'Labels', render: (e) => (e.labels ?? []).map((l) => <span key={`${l.key}:${l.value}`} className="chip">{l.key}:{l.value}</span>) },
  revision: { key: 'revision', header: 'Revision', className: 'num', render: (e) => e.flowRevision ?? '' },
} satisfies Record<string, Column<ExecutionSummary>>;

export type ExecutionColumn = keyof typeof COLUMNS;

/** The named columns, in the order given. */
export const executionColumns = (...keys: ExecutionColumn[]): Column<ExecutionSummary>[] => keys.map((k) => COLUMNS[k]);
