// /ui/executions/{namespace}/{flowId}/{id}[/{tab}]: one execution, live. Its header (state, dates, duration, labels
// editable once it has ended, inputs), the actions (Kill, Restart, Replay from a chosen task run, Resume a PAUSED one
// with its Pause's onResume inputs) and the tab bar (tabs.ts). The execution comes from its follow stream
// (GET /executions/{id}/follow: the current state, then every change, until it ends), which reconnects by itself
// after a dropped connection and is opened again after an action that makes an ended execution run again.
import { useEffect, useRef, useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { ApiError, api, followSse, seg, type Execution, type FlowInput, type FlowLabel } from '../../api';
import { DateTime, formatDuration } from '../../components/DateTime';
import { ConfirmDialog, Dialog } from '../../components/Dialog';
import { EmptyState } from '../../components/EmptyState';
import { ErrorBanner } from '../../components/ErrorBanner';
import { ExecutionLink } from '../../components/ExecutionLink';
import { InputsForm } from '../../components/InputsForm';
import { StateBadge } from '../../components/StateBadge';
import { Tabs } from '../../components/Tabs';
import { ganttModel } from './gantt-model';
import { EXECUTION_TABS } from './tabs';
import { isTerminalState, RESTARTABLE, runLabel } from './states';
import { DEFAULT_EXECUTION_TAB, executionPath, flowPath } from '../../paths';

export function ExecutionPage() {
  const { id = '' } = useParams();
  return <ExecutionView key={id} />;
}

/** The Pause tasks an execution waits at (their task ids). */
const pausedTaskIds = (e: Execution): Set<string> => new Set(e.taskRunList
  .filter((r) => !isTerminalState(r.state.current) && (r.flowableState?.status === 'PAUSED' || r.state.current === 'PAUSED'))
  .map((r) => r.taskId));

/** The `onResume` inputs declared by the tasks `ids` anywhere in a flow document (task ids are unique in a flow). */
function onResumeOf(flow: unknown, ids: Set<string>): FlowInput[] {
  const out = new Map<string, FlowInput>();
  const stack: unknown[] = [flow];
  while (stack.length) {
    const v = stack.pop();
    if (Array.isArray(v)) { stack.push(...v); continue; }
    if (!v || typeof v !== 'object') continue;
    const o = v as Record<string, unknown>;
    if (typeof o.id === 'string' && ids.has(o.id) && Array.isArray(o.onResume)) {
      for (const i of o.onResume as FlowInput[]) if (!out.has(i.id)) out.set(i.id, i);
    }
    for (const [k, x] of Object.entries(o)) if (k !== 'source' && typeof x === 'object') stack.push(x);
  }
  return [...out.values()];
}

type Action = 'kill' | 'restart' | 'replay' | 'resume' | 'labels';

function ExecutionView() {
  const { namespace = '', flowId = '', id = '', tab = DEFAULT_EXECUTION_TAB } = useParams();
  const navigate = useNavigate();
  const [execution, setExecution] = useState<Execution>();
  const [streamError, setStreamError] = useState<unknown>();
  const [follow, setFollow] = useState(0);
  // A terminal snapshot with at most this many state changes does not end the follow: it is the state from before an
  // action (restart) the controller has not applied yet; the stream is opened again until the new run shows.
  const staleHistory = useRef(-1);
  const [now, setNow] = useState(Date.now());
  const [action, setAction] = useState<Action>();
  const [busy, setBusy] = useState(false);
  const [actionError, setActionError] = useState<unknown>();

  useEffect(() => {
    const parse = (data: string): Execution | undefined => { try { return JSON.parse(data) as Execution; } catch { return undefined; } };
    const s = followSse(`/executions/${seg(id)}/follow`, {
      retryMs: 500,
      onEvent: (e) => {
        setStreamError(undefined);
        if (e.id === 'start') return;
        const x = parse(e.data);
        if (x?.taskRunList) setExecution(x);
      },
      onError: (err) => setStreamError(err),
      isEnd: (e) => e.id === 'end' && (parse(e.data)?.state.histories?.length ?? 0) > staleHistory.current,
    });
    return () => s.stop();
  }, [id, follow]);

  const running = execution !== undefined && !isTerminalState(execution.state.current);
  useEffect(() => {
    if (!running) return undefined;
    const t = setInterval(() => setNow(Date.now()), 1000);
    return () => clearInterval(t);
  }, [running]);

  const close = () => { setAction(undefined); setActionError(undefined); };
  const run = async (f: () => Promise<void>) => {
    setBusy(true);
    setActionError(undefined);
    try {
      await f();
      setAction(undefined);
    } catch (err) {
      setActionError(err);
    } finally {
      setBusy(false);
    }
  };
  /** Follows again after an action that makes the execution run again (restart, resume). */
  const refollow = () => {
    staleHistory.current = execution?.state.histories?.length ?? 0;
    setFollow((n) => n + 1);
  };

  if (!execution) {
    return (
      <section>
        <ErrorBanner error={streamError} />
        {!(streamError instanceof ApiError) && <p className="muted" role="status">Loading…</p>}
      </section>
    );
  }

  const state = execution.state;
  const terminal = !running;
  const paused = state.current === 'PAUSED';
  const current = EXECUTION_TABS.find((t) => t.id === tab);
  const duration = terminal ? formatDuration(state.duration) : formatDuration(now - Date.parse(state.startDate ?? new Date(now).toISOString()));

  return (
    <section>
      <div className="page-head">
        <div>
          <div className="breadcrumb">
            <Link to="/executions">Executions</Link> / <Link to={`/executions?namespace=${encodeURIComponent(namespace)}`}>{namespace}</Link>
            {' / '}<Link to={flowPath(execution.namespace, execution.flowId, 'overview')}>{execution.flowId}</Link>
          </div>
          <h1><code>{execution.id}</code></h1>
        </div>
        <div className="row-gap" role="group" aria-label="Execution actions">
          <button type="button" disabled={terminal} onClick={() => setAction('kill')}>Kill</button>
          <button type="button" disabled={!RESTARTABLE.has(state.current)} onClick={() => setAction('restart')}>Restart</button>
          <button type="button" disabled={!terminal} onClick={() => setAction('replay')}>Replay</button>
          <button type="button" className={paused ? 'primary' : undefined} disabled={!paused} onClick={() => setAction('resume')}>Resume</button>
        </div>
      </div>
      {streamError !== undefined && !(streamError instanceof ApiError) && (
        <p className="muted" role="status">Connection to the live updates lost; reconnecting…</p>
      )}
      <ErrorBanner error={streamError instanceof ApiError ? streamError : undefined} />
      <dl className="exec-header panel">
        <div><dt>State</dt><dd><span role="status" aria-label="Execution state"><StateBadge state={state.current} /></span></dd></div>
        <div><dt>Flow</dt><dd>{execution.namespace}.{execution.flowId} <span className="muted">rev {execution.flowRevision}</span></dd></div>
        <div><dt>Start</dt><dd><DateTime value={state.startDate} /></dd></div>
        <div><dt>End</dt><dd><DateTime value={state.endDate} /></dd></div>
        <div><dt>Duration</dt><dd aria-label="Duration">{duration}</dd></div>
        <div>
          <dt>Labels</dt>
          <dd>
            <span aria-label="Labels">{execution.labels.length ? execution.labels.map((l) => <span key={l.key} className="chip">{l.key}:{l.value}</span>) : <span className="muted">none</span>}</span>
            <button type="button" className="link" disabled={!terminal} title={terminal ? undefined : 'Labels can be changed once the execution has ended'}
              onClick={() => setAction('labels')}>Edit labels</button>
          </dd>
        </div>
        {execution.parent && (
          <div><dt>Parent</dt><dd><ExecutionLink namespace={execution.parent.namespace} flowId={execution.parent.flowId} id={execution.parent.executionId} /></dd></div>
        )}
        {execution.originalId && execution.originalId !== execution.id && (
          <div><dt>Replay of</dt><dd><code>{execution.originalId}</code></dd></div>
        )}
        <div className="wide">
          <dt>Inputs</dt>
          <dd>
            {Object.keys(execution.inputs ?? {}).length === 0 ? <span className="muted">none</span> : (
              <ul className="kv" aria-label="Inputs">
                {Object.entries(execution.inputs ?? {}).map(([k, v]) => <li key={k}><code>{k}</code>: <code>{typeof v === 'string' ? v : JSON.stringify(v)}</code></li>)}
              </ul>
            )}
          </dd>
        </div>
      </dl>

      <Tabs label="Execution" tabs={EXECUTION_TABS} current={tab} to={(t) => executionPath(namespace, flowId, id, t)} />
      {!current && <EmptyState title={`This execution has no tab '${tab}'`} />}
      {current && <current.component execution={execution} />}

      <ConfirmDialog title="Kill this execution?" open={action === 'kill'} confirmLabel="Kill execution" busy={busy} onCancel={close}
        onConfirm={() => run(() => api.killExecution(execution.id))}>
        <p>Its running tasks are stopped and it ends KILLED.</p>
        <ErrorBanner error={actionError} />
      </ConfirmDialog>
      <ConfirmDialog title="Restart this execution?" open={action === 'restart'} confirmLabel="Restart execution" busy={busy} onCancel={close}
        onConfirm={() => run(async () => { await api.restartExecution(execution.id); refollow(); })}>
        <p>Its failed task runs run again; the successful ones are kept.</p>
        <ErrorBanner error={actionError} />
      </ConfirmDialog>
      {action === 'replay' && (
        <ReplayDialog execution={execution} busy={busy} error={actionError} onCancel={close}
          onReplay={(taskRunId) => run(async () => {
            const created = await api.replayExecution(execution.id, taskRunId);
            navigate(executionPath(created.namespace, created.flowId, created.id));
          })} />
      )}
      {action === 'resume' && (
        <ResumeDialog execution={execution} onCancel={close}
          onResume={async (values) => { await api.resumeExecution(execution.id, values); refollow(); close(); }} />
      )}
      {action === 'labels' && (
        <LabelsDialog labels={execution.labels} busy={busy} error={actionError} onCancel={close}
          onSave={(labels) => run(async () => { setExecution({ ...execution, ...(await api.setExecutionLabels(execution.id, labels)) }); })} />
      )}
    </section>
  );
}

function ReplayDialog({ execution, busy, error, onCancel, onReplay }: {
  execution: Execution; busy: boolean; error: unknown; onCancel(): void; onReplay(taskRunId: string | undefined): void;
}) {
  const [from, setFrom] = useState('');
  // The task runs in the Gantt's order (children under their parent), indented by depth.
  const rows = ganttModel(execution.taskRunList, Date.now(), execution.state.startDate).rows;
  return (
    <Dialog title="Replay this execution" open onClose={onCancel}>
      <div className="dialog-body">
        <p>A new execution of the same flow revision with the same inputs; from a task run, the ones before it are kept as they ended.</p>
        <label className="field">From task run
          <select value={from} onChange={(e) => setFrom(e.target.value)}>
            <option value="">The start (the whole execution)</option>
            {rows.map((r) => <option key={r.id} value={r.id}>{'\u00a0\u00a0'.repeat(r.depth)}{runLabel(r)} ({r.state})</option>)}
          </select>
        </label>
        <ErrorBanner error={error} />
      </div>
      <footer className="dialog-foot">
        <button type="button" onClick={onCancel} disabled={busy}>Cancel</button>
        <button type="button" className="primary" disabled={busy} onClick={() => onReplay(from || undefined)}>Replay execution</button>
      </footer>
    </Dialog>
  );
}

function ResumeDialog({ execution, onCancel, onResume }: {
  execution: Execution; onCancel(): void; onResume(values: FormData): Promise<void>;
}) {
  const [inputs, setInputs] = useState<FlowInput[]>();
  const [loadError, setLoadError] = useState<unknown>();
  useEffect(() => {
    const ctrl = new AbortController();
    api.executionFlow(execution.id, ctrl.signal).then(
      (flow) => setInputs(onResumeOf(flow, pausedTaskIds(execution))),
      (err) => { if (!ctrl.signal.aborted) { setLoadError(err); setInputs([]); } },
    );
    return () => ctrl.abort();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [execution.id]);
  return (
    <Dialog title="Resume this execution" open onClose={onCancel}>
      {loadError !== undefined && <div className="dialog-body"><ErrorBanner error={loadError} /></div>}
      {inputs === undefined ? <div className="dialog-body"><p className="muted" role="status">Loading…</p></div> : (
        <InputsForm inputs={inputs} label="Resume inputs" submitLabel="Resume execution" emptyText="No inputs to fill."
          onSubmit={onResume} onCancel={onCancel} />
      )}
    </Dialog>
  );
}

function LabelsDialog({ labels, busy, error, onCancel, onSave }: {
  labels: FlowLabel[]; busy: boolean; error: unknown; onCancel(): void; onSave(labels: FlowLabel[]): void;
}) {
  const [rows, setRows] = useState<FlowLabel[]>(() => (labels.length ? labels.map((l) => ({ ...l })) : [{ key: '', value: '' }]));
  const set = (i: number, patch: Partial<FlowLabel>) => setRows((rs) => rs.map((r, j) => (j === i ? { ...r, ...patch } : r)));
  return (
    <Dialog title="Edit labels" open onClose={onCancel}>
      <form onSubmit={(e) => { e.preventDefault(); onSave(rows.filter((r) => r.key.trim() !== '')); }}>
        <div className="dialog-body">
          <table className="table" aria-label="Labels to save">
            <thead><tr><th scope="col">Key</th><th scope="col">Value</th><th scope="col"><span className="sr-only">Remove</span></th></tr></thead>
            <tbody>
              {rows.map((r, i) => (
                <tr key={i}>
                  <td><input aria-label={`Label ${i + 1} key`} value={r.key} onChange={(e) => set(i, { key: e.target.value })} /></td>
                  <td><input aria-label={`Label ${i + 1} value`} value={r.value} onChange={(e) => set(i, { value: e.target.value })} /></td>
                  <td><button type="button" aria-label={`Remove label ${i + 1}`} onClick={() => setRows((rs) => rs.filter((_, j) => j !== i))}>×</button></td>
                </tr>
              ))}
            </tbody>
          </table>
          <button type="button" onClick={() => setRows((rs) => [...rs, { key: '', value: '' }])}>Add label</button>
          <ErrorBanner error={error} />
        </div>
        <footer className="dialog-foot">
          <button type="button" onClick={onCancel} disabled={busy}>Cancel</button>
          <button type="submit" className="primary" disabled={busy}>Save labels</button>
        </footer>
      </form>
    </Dialog>
  );
}
