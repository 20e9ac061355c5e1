// The execution's `logs` tab: its log lines filtered by minimum level and task (both in the URL), followed live
// through GET /logs/{id}/follow while the execution runs (stored lines first, then new ones; the newest
// FOLLOW_MAX_LINES kept), else read one page at a time from the server; and a download of the matching lines as text.
// Its level and message columns are also those of the log search (pages/logs/LogsSearch.tsx, the flow's Logs tab).
import { useMemo, useRef, useState } from 'react';
import { LOG_LEVELS, api, downloadFile, executionLogsDownloadPath, query, seg, type LogLine } from '../../../api';
import { EmptyState } from '../../../components/EmptyState';
import { ErrorBanner } from '../../../components/ErrorBanner';
import { Table, usePaging, type Column } from '../../../components/Table';
import { useApi, useSse, useUrlFilters } from '../../../hooks';
import { isTerminalState } from '../states';
import type { ExecutionTabProps } from '../tabs';

/** Lines kept in the page while following (the oldest are dropped beyond it; the download has them all). */
const FOLLOW_MAX_LINES = 5000;

/** A line and its position in the stream (the rows' key). */
type Numbered = LogLine & { seq: number };

/** A log line's level, coloured (styles.css `.level-{LEVEL}`). */
export const logLevelColumn: Column<LogLine> = { key: 'level', header: 'Level', render: (l) => <span className={`level level-${l.level}`}>{l.level}</span> };
/** The task that logged the line (`flow` for the flow's own lines). */
export const logTaskColumn: Column<LogLine> = { key: 'task', header: 'Task', render: (l) => (l.taskId ? <code>{l.taskId}</code> : <span className="muted">flow</span>) };
/** The message, as written (pre-wrapped, monospace). */
export const logMessageColumn: Column<LogLine> = { key: 'message', header: 'Message', className: 'log-message', render: (l) => l.message };

const columns: Column<Numbered>[] = [
  { key: 'time', header: 'Time', className: 'nowrap', render: (l) => <time dateTime={l.timestamp} title={l.timestamp}>{new Date(l.timestamp).toLocaleTimeString()}</time> },
  logLevelColumn, logTaskColumn, logMessageColumn,
];

export function ExecutionLogs({ execution }: ExecutionTabProps) {
  const filters = useUrlFilters();
  const minLevel = filters.value('level');
  const taskId = filters.value('taskId');
  const [live, setLive] = useState(!isTerminalState(execution.state.current));
  const [downloadError, setDownloadError] = useState<unknown>();
  const taskIds = useMemo(() => [...new Set(execution.taskRunList.map((r) => r.taskId))], [execution.taskRunList]);

  return (
    <div className="stack">
      <div className="filters" role="search">
        <label className="field-inline">Minimum level
          <select value={minLevel} onChange={(e) => filters.set('level', e.target.value)}>
            <option value="">All levels</option>
            {LOG_LEVELS.map((l) => <option key={l} value={l}>{l}</option>)}
          </select>
        </label>
        <label className="field-inline">Task
          <select value={taskId} onChange={(e) => filters.set('taskId', e.target.value)}>
            <option value="">All tasks</option>
            {taskIds.map((t) => <option key={t} value={t}>{t}</option>)}
          </select>
        </label>
        <label className="field-inline">
          <input type="checkbox" checked={live} onChange={(e) => setLive(e.target.checked)} /> Follow live
        </label>
        <span className="spacer" />
        <button type="button" onClick={() => {
          setDownloadError(undefined);
          downloadFile(executionLogsDownloadPath(execution.id, { minLevel: minLevel || undefined, taskId: taskId || undefined }), `${execution.id}.log`)
            .catch(setDownloadError);
        }}>Download logs</button>
      </div>
      <ErrorBanner error={downloadError} />
      {live
        ? <FollowedLogs executionId={execution.id} ended={isTerminalState(execution.state.current)} minLevel={minLevel} taskId={taskId} />
        : <PagedLogs executionId={execution.id} minLevel={minLevel} taskId={taskId} />}
    </div>
  );
}

function FollowedLogs({ executionId, ended, minLevel, taskId }: { executionId: string; ended: boolean; minLevel: string; taskId: string }) {
  // The server closes the follow once the execution has ended; a close before that (a proxy's timeout, a server
  // ending the answer early) is followed again, the lines starting over from the `start` event.
  const endedRef = useRef(ended);
  endedRef.current = ended;
  const [lines, setLines] = useState<{ list: Numbered[]; dropped: number; started: boolean }>({ list: [], dropped: 0, started: false });
  const path = `/logs/${seg(executionId)}/follow${query({ minLevel: minLevel || undefined })}`;
  const [shownPath, setShownPath] = useState(path);
  if (shownPath !== path) { setShownPath(path); setLines({ list: [], dropped: 0, started: false }); }
  const { error } = useSse(path, (e) => {
    // Each (re)connection sends every stored line again from the first: start over.
    if (e.id === 'start') { setLines({ list: [], dropped: 0, started: true }); return; }
    let parsed: LogLine;
    try { parsed = JSON.parse(e.data) as LogLine; } catch { return; }
    setLines((s) => {
      const list = [...s.list, { ...parsed, seq: s.dropped + s.list.length }];
      const over = list.length - FOLLOW_MAX_LINES;
      return over > 0 ? { list: list.slice(over), dropped: s.dropped + over, started: true } : { ...s, list };
    });
  }, { endOnClose: () => endedRef.current });
  const shown = taskId ? lines.list.filter((l) => l.taskId === taskId) : lines.list;
  return (
    <>
      <ErrorBanner error={error} />
      {lines.dropped > 0 && <p className="muted">The {lines.dropped} oldest lines are not shown; the download has them all.</p>}
      <Table label="Log lines" columns={columns} rows={shown} rowKey={(l) => String(l.seq)}
        empty={lines.started ? <EmptyState title="No log line yet" /> : <p className="muted" role="status">Loading…</p>} />
    </>
  );
}

function PagedLogs({ executionId, minLevel, taskId }: { executionId: string; minLevel: string; taskId: string }) {
  const { page, size, setPaging } = usePaging(100);
  const logs = useApi((signal) => api.executionLogs(executionId, { minLevel: minLevel || undefined, taskId: taskId || undefined, page, size }, signal),
    [executionId, minLevel, taskId, page, size]);
  return (
    <>
      <ErrorBanner error={logs.error} onRetry={logs.reload} />
      {logs.data && (
        <Table label="Log lines" columns={columns} rows={logs.data.results.map((l, i) => ({ ...l, seq: i }))} rowKey={(l) => String(l.seq)}
          paging={{ page, size, total: logs.data.total, onChange: setPaging }}
          empty={<EmptyState title={minLevel || taskId ? 'No log line matches these filters' : 'This execution logged nothing'} />} />
      )}
      {logs.loading && !logs.data && <p className="muted" role="status">Loading…</p>}
    </>
  );
}
