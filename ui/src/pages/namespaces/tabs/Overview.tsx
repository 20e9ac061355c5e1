// The namespace's Overview tab: how many flows it holds, its executions of the last 30 days by state (counted by the
// server's daily statistics), and its latest executions (one page).
import { api } from '../../../api';
import { EmptyState } from '../../../components/EmptyState';
import { ErrorBanner } from '../../../components/ErrorBanner';
import { executionColumns } from '../../../components/execution-columns';
import { Table } from '../../../components/Table';
import { useApi } from '../../../hooks';
import { StateTotals, useDailyCounts } from '../../dashboard/Dashboard';
import type { NamespaceTabProps } from '../tabs';

const RECENT = 10;

const columns = executionColumns('id', 'flow', 'state', 'start', 'duration');

export function NamespaceOverview({ namespace }: NamespaceTabProps) {
  const flows = useApi((signal) => api.searchFlows({ namespace, page: 1, size: 1 }, signal), [namespace]);
  const counts = useDailyCounts(30, namespace);
  const recent = useApi((signal) => api.searchExecutions({ namespace, page: 1, size: RECENT }, signal), [namespace]);
  const executions = counts.data ? Object.values(counts.data.totals).reduce((a, b) => a + b, 0) : undefined;
  return (
    <div className="stack">
      <ErrorBanner error={flows.error ?? counts.error} />
      <div className="columns">
        <section className="panel stat" aria-labelledby="ns-flows-h">
          <h2 id="ns-flows-h">Flows</h2>
          <p className="stat-value" aria-label="Flow count">{flows.data?.total ?? '…'}</p>
        </section>
        <section className="panel stat" aria-labelledby="ns-execs-h">
          <h2 id="ns-execs-h">Executions, last 30 days</h2>
          <p className="stat-value" aria-label="Execution count">{executions ?? '…'}</p>
        </section>
        <section className="panel grow" aria-labelledby="ns-states-h">
          <h2 id="ns-states-h">By state, last 30 days</h2>
          {counts.data && <StateTotals label="Executions by state" totals={counts.data.totals} />}
        </section>
      </div>
      <section className="panel" aria-labelledby="ns-recent-h">
        <h2 id="ns-recent-h">Recent executions</h2>
        <ErrorBanner error={recent.error} onRetry={recent.reload} />
        {recent.data && (
          <Table label="Recent executions" columns={columns} rows={recent.data.results} rowKey={(e) => e.id}
            empty={<EmptyState title="No execution in this namespace yet" />} />
        )}
      </section>
    </div>
  );
}
