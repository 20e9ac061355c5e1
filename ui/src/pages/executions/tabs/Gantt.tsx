// The execution's Gantt tab (the default): one row per task run, children nested under their flowable parent
// (collapsible), one bar per attempt on a time axis from the execution's start; live while the execution runs (the
// page's follow stream updates the execution, running bars grow each second). Only the rows in view are in the DOM
// (virtualised), so an execution with thousands of task runs renders as fast as a small one. A click on a row shows
// that task run's attempts.
import { useEffect, useMemo, useRef, useState } from 'react';
import { Link, useParams } from 'react-router';
import type { TaskRun } from '../../../api';
import { DateTime, formatDuration } from '../../../components/DateTime';
import { EmptyState } from '../../../components/EmptyState';
import { StateBadge } from '../../../components/StateBadge';
import { ganttModel, ticks, type GanttRow } from '../gantt-model';
import { isTerminalState, runLabel } from '../states';
import { type ExecutionTabProps } from '../tabs';
import { executionPath } from '../../../paths';

const ROW_HEIGHT = 26;
const VIEW_HEIGHT = 520;
const OVERSCAN = 8;

export function ExecutionGantt({ execution }: ExecutionTabProps) {
  const { namespace = '', flowId = '' } = useParams();
  const running = !isTerminalState(execution.state.current);
  const [now, setNow] = useState(Date.now());
  useEffect(() => {
    if (!running) return undefined;
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, [running]);
  const [collapsed, setCollapsed] = useState<ReadonlySet<string>>(new Set());
  const [selected, setSelected] = useState<string>();
  const [scrollTop, setScrollTop] = useState(0);
  const viewport = useRef<HTMLDivElement>(null);

  const model = useMemo(
    () => ganttModel(execution.taskRunList, running ? now : Date.now(), execution.state.startDate, collapsed),
    // eslint-disable-next-line react-hooks/exhaustive-deps
    [execution, collapsed, running ? now : 0],
  );
  const length = model.end - model.start;
  const pct = (t: number): number => ((t - model.start) / length) * 100;
  const first = Math.max(0, Math.floor(scrollTop / ROW_HEIGHT) - OVERSCAN);
  const last = Math.min(model.rows.length, Math.ceil((scrollTop + VIEW_HEIGHT) / ROW_HEIGHT) + OVERSCAN);
  const visible = model.rows.slice(first, last);
  const byId = useMemo(() => new Map(execution.taskRunList.map((r) => [r.id, r])), [execution]);
  const chosen = selected ? byId.get(selected) : undefined;

  const toggle = (id: string) => setCollapsed((s) => {
    const next = new Set(s);
    if (next.has(id)) next.delete(id); else next.add(id);
    return next;
  });

  if (execution.taskRunList.length === 0) return <EmptyState title={running ? 'No task has started yet' : 'This execution ran no task'} />;

  return (
    <div className="stack">
      <div className="gantt panel" role="table" aria-label="Gantt" aria-rowcount={model.rows.length + 1} data-total-rows={model.rows.length}>
        <div className="gantt-row gantt-axis" role="row" aria-rowindex={1}>
          <div className="gantt-label" role="columnheader">Task run ({execution.taskRunList.length})</div>
          <div className="gantt-track" role="columnheader" aria-label="Time since start">
            {ticks(length).map((t) => <span key={t} className="gantt-tick" style={{ left: `${(t / length) * 100}%` }}>{formatDuration(t)}</span>)}
          </div>
        </div>
        <div className="gantt-viewport" ref={viewport} style={{ maxHeight: VIEW_HEIGHT }} onScroll={(e) => setScrollTop(e.currentTarget.scrollTop)}>
          <div style={{ height: model.rows.length * ROW_HEIGHT, position: 'relative' }}>
            <div style={{ transform: `translateY(${first * ROW_HEIGHT}px)` }} role="rowgroup">
              {visible.map((r, i) => (
                <GanttLine key={r.id} row={r} index={first + i} pct={pct} selected={r.id === selected} collapsed={collapsed.has(r.id)}
                  onSelect={() => setSelected(r.id === selected ? undefined : r.id)} onToggle={() => toggle(r.id)} />
              ))}
            </div>
          </div>
        </div>
      </div>
      {chosen && <TaskRunDetails run={chosen} logsTo={`${executionPath(namespace, flowId, execution.id, 'logs')}?taskId=${encodeURIComponent(chosen.taskId)}`} />}
    </div>
  );
}

function GanttLine({ row, index, pct, selected, collapsed, onSelect, onToggle }: {
  row: GanttRow; index: number; pct(t: number): number; selected: boolean; collapsed: boolean; onSelect(): void; onToggle(): void;
}) {
  const label = runLabel(row);
  return (
    <div className={`gantt-row${selected ? ' selected' : ''}`} role="row" aria-rowindex={index + 2} aria-selected={selected} style={{ height: ROW_HEIGHT }}>
      <div className="gantt-label" role="rowheader" style={{ paddingLeft: 6 + row.depth * 14 }}>
        {row.hasChildren
          ? <button type="button" className="link gantt-fold" aria-expanded={!collapsed} aria-label={`${collapsed ? 'Expand' : 'Collapse'} ${label}`} onClick={onToggle}>{collapsed ? '▸' : '▾'}</button>
          : <span className="gantt-fold" />}
        <button type="button" className="link gantt-name" title={label} onClick={onSelect}>{label}</button>
      </div>
      <div className="gantt-track" role="cell">
        {row.bars.map((b, i) => {
          const left = pct(b.start);
          const width = Math.max(0.3, pct(b.end) - left);
          const text = `${label}${b.attempt ? ` attempt ${b.attempt}` : ''}: ${b.state}, ${formatDuration(b.end - b.start)}`;
          return <span key={i} className={`gantt-bar bar-${b.state}`} role="img" aria-label={text} title={text} style={{ left: `${left}%`, width: `${width}%` }} />;
        })}
      </div>
    </div>
  );
}

function TaskRunDetails({ run, logsTo }: { run: TaskRun; logsTo: string }) {
  return (
    <section className="panel" aria-label={`Task run ${runLabel(run)}`}>
      <h2>{runLabel(run)} <StateBadge state={run.state.current} /></h2>
      <p className="muted">Task run <code>{run.id}</code> · <Link to={logsTo}>Logs of this task</Link></p>
      {run.error && <p className="field-error">{run.error}</p>}
      <table className="table" aria-label="Attempts">
        <thead><tr><th scope="col">Attempt</th><th scope="col">State</th><th scope="col">Start</th><th scope="col">End</th><th scope="col">Duration</th></tr></thead>
        <tbody>
          {(run.attempts ?? []).map((a, i) => (
            <tr key={i}>
              <td>{i + 1}</td><td><StateBadge state={a.state.current} /></td><td><DateTime value={a.state.startDate} /></td>
              <td><DateTime value={a.state.endDate} /></td>
              <td>{a.state.endDate && a.state.startDate ? formatDuration(Date.parse(a.state.endDate) - Date.parse(a.state.startDate)) : '–'}</td>
            </tr>
          ))}
        </tbody>
      </table>
      {(run.attempts ?? []).length === 0 && <p className="muted">No attempt: a flowable task runs its children.</p>}
    </section>
  );
}
