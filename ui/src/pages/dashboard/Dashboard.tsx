// /ui/dashboard (the home page): executions per day by state over a chosen range (POST /stats/executions/daily,
// counted by the server: no execution document is loaded), totals by state with failures first, and the latest
// failed executions (one page of the search).
import { Link, useSearchParams } from 'react-router';
import { api } from '../../api';
import { EmptyState } from '../../components/EmptyState';
import { ErrorBanner } from '../../components/ErrorBanner';
import { executionColumns } from '../../components/execution-columns';
import { StateBarChart } from '../../components/StateBarChart';
import { StateBadge } from '../../components/StateBadge';
import { Table } from '../../components/Table';
import { useApi } from '../../hooks';


/** States in the order the dashboard shows them: failures first. */
export const STATE_ORDER = ['FAILED', 'KILLED', 'WARNING', 'SUCCESS', 'RUNNING', 'PAUSED', 'RETRYING', 'RESTARTED', 'KILLING',
  'QUEUED', 'CREATED', 'CANCELLED', 'SKIPPED', 'RETRIED', 'BREAKPOINT', 'RESUBMITTED', 'SUBMITTED'];
const RANGES = [7, 30, 90, 365];
const RECENT_FAILED = 10;
const DAY_MS = 86_400_000;

/** The daily statistics of the last `days` days (today included) for an optional namespace; `range` is the `days`
 *  these counts were asked for (while another range loads, the counts shown and their label still agree). */
export function useDailyCounts(days: number, namespace?: string) {
  return useApi(async (signal) => {
    const end = new Date();
    const start = new Date(Date.UTC(end.getUTCFullYear(), end.getUTCMonth(), end.getUTCDate()) - (days - 1) * DAY_MS);
    const stats = await api.dailyStatistics({ namespace, startDate: start.toISOString(), endDate: end.toISOString() }, signal);
    const totals: Record<string, number> = {};
    for (const d of stats) for (const [s, n] of Object.entries(d.executionCounts)) totals[s] = (totals[s] ?? 0) + n;
    return { range: days, days: stats.map((d) => ({ day: d.startDate.slice(0, 10), counts: d.executionCounts })), totals };
  }, [days, namespace]);
}

/** Totals by state (failures first), the states with none left out. */
export function StateTotals({ totals, label }: { totals: Record<string, number>; label: string }) {
  const rows = STATE_ORDER.filter((s) => (totals[s] ?? 0) > 0).map((s) => ({ state: s, count: totals[s]! }));
  const all = Object.values(totals).reduce((a, b) => a + b, 0);
  return (
    <Table label={label} rows={rows} rowKey={(r) => r.state} empty={<EmptyState title="No executions in this range" />}
      columns={[
        { key: 'state', header: 'State', render: (r) => <StateBadge state={r.state} /> },
        { key: 'count', header: 'Executions', className: 'num', render: (r) => r.count },
        { key: 'share', header: 'Share', className: 'num', render: (r) => `${Math.round((r.count / all) * 100)} %` },
      ]} />
  );
}

const failedColumns = executionColumns('id', 'flow', 'state', 'start', 'duration');

export function Dashboard() {
  const [params, setParams] = useSearchParams();
  const days = RANGES.includes(Number(params.get('days'))) ? Number(params.get('days')) : 30;
  const counts = useDailyCounts(days);
  const failed = useApi((signal) => api.searchExecutions({ state: ['FAILED'], page: 1, size: RECENT_FAILED }, signal), []);
  return (
    <section>
      <div className="page-head">
        <h1>Dashboard</h1>
        <label className="field-inline">Range
          <select value={days} onChange={(e) => setParams({ days: e.target.value })}>
            {RANGES.map((d) => <option key={d} value={d}>Last {d} days</option>)}
          </select>
        </label>
      </div>
      <div className="stack">
        <section className="panel" aria-labelledby="per-day-h">
          <h2 id="per-day-h">Executions per day</h2>
          <ErrorBanner error={counts.error} onRetry={counts.reload} />
          {counts.data && <StateBarChart label={`Executions per day by state, last ${counts.data.range} days`} days={counts.data.days} order={STATE_ORDER} />}
          {counts.loading && !counts.data && <p className="muted" role="status">Loading…</p>}
        </section>
        <div className="columns">
          <section className="panel" aria-labelledby="totals-h">
            <h2 id="totals-h">Executions by state</h2>
            {counts.data && <StateTotals label="Executions by state" totals={counts.data.totals} />}
          </section>
          <section className="panel grow" aria-labelledby="failed-h">
            <h2 id="failed-h">Latest failed executions</h2>
            <ErrorBanner error={failed.error} onRetry={failed.reload} />
            {failed.data && (
              <Table label="Latest failed executions" columns={failedColumns} rows={failed.data.results} rowKey={(e) => e.id}
                empty={<EmptyState title="No failed execution" />} />
            )}
            {failed.data && failed.data.total > RECENT_FAILED && (
              <p className="muted"><Link to="/executions?state=FAILED">All {failed.data.total} failed executions</Link></p>
            )}
          </section>
        </div>
      </div>
    </section>
  );
}
