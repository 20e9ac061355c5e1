// /ui/logs: full-text search across the logs of every execution (GET /logs/search, SQLite FTS5 syntax), filtered by
// namespace and minimum level, paged on the server, each line linked to its execution. `LogSearch` is also the
// flow page's Logs tab (namespace and flow fixed). Filters live in the URL; the level, task and message columns are the
// execution Logs tab's.
import { Link } from 'react-router';
import { LOG_LEVELS, api, type LogEntry } from '../../api';
import { DateTime } from '../../components/DateTime';
import { EmptyState } from '../../components/EmptyState';
import { ErrorBanner } from '../../components/ErrorBanner';
import { NamespaceSelect } from '../../components/NamespaceSelect';
import { ExecutionLink } from '../../components/ExecutionLink';
import { SearchFilter } from '../../components/Filters';
import { Table, usePaging, type Column } from '../../components/Table';
import { useApi, useUrlFilters } from '../../hooks';
import { logLevelColumn, logMessageColumn, logTaskColumn } from '../executions/tabs/Logs';
import { flowPath } from '../../paths';


export function LogSearch({ namespace: fixedNamespace, flowId }: { namespace?: string; flowId?: string }) {
  const filters = useUrlFilters();
  const q = filters.value('q');
  const level = filters.value('level');
  const namespace = fixedNamespace ?? filters.value('namespace');
  const { page, size, setPaging } = usePaging(50);
  const logs = useApi((signal) => api.searchLogs({
    q: q || undefined, namespace: namespace || undefined, exact: fixedNamespace !== undefined, flowId, minLevel: level || undefined, page, size,
  }, signal), [q, namespace, flowId, level, page, size]);

  const columns: Column<LogEntry & { row: number }>[] = [
    { key: 'date', header: 'Date', render: (l) => <DateTime value={l.timestamp} /> },
    logLevelColumn,
    ...(flowId ? [] : [{ key: 'flow', header: 'Flow', render: (l: LogEntry & { row: number }) => <Link to={flowPath(l.namespace, l.flowId)}>{l.namespace}.{l.flowId}</Link> }]),
    { key: 'execution', header: 'Execution', render: (l) => <ExecutionLink namespace={l.namespace} flowId={l.flowId} id={l.executionId} /> },
    logTaskColumn,
    logMessageColumn,
  ];
  return (
    <div>
      <form className="filters" role="search" onSubmit={(e) => { e.preventDefault(); filters.applySearch(); }}>
        <SearchFilter filters={filters} label="Search logs" placeholder="Words in the message" />
        <button type="submit">Search</button>
        {!fixedNamespace && (
          <NamespaceSelect value={namespace} onChange={(ns) => filters.set('namespace', ns)} />
        )}
        <label className="field-inline">Level
          <select value={level} onChange={(e) => filters.set('level', e.target.value)}>
            <option value="">All levels</option>
            {LOG_LEVELS.map((l) => <option key={l} value={l}>{l} and above</option>)}
          </select>
        </label>
      </form>
      <ErrorBanner error={logs.error} onRetry={logs.reload} />
      {logs.data && (
        <Table label="Log lines" columns={columns} rows={logs.data.results.map((l, i) => ({ ...l, row: i }))}
          rowKey={(l) => String(l.row)}
          paging={{ page, size, total: logs.data.total, onChange: setPaging }}
          empty={<EmptyState title={q || level ? 'No log line matches' : 'No log lines'} />} />
      )}
      {logs.loading && !logs.data && <p className="muted" role="status">Loading…</p>}
    </div>
  );
}

export function LogsSearch() {
  return (
    <section>
      <div className="page-head"><h1>Logs</h1></div>
      <LogSearch />
    </section>
  );
}
