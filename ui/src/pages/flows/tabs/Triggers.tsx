// The flow's Triggers tab: each trigger's state (enabled, last and next dates, lock), enable/disable and unlock, and
// for a Schedule a backfill (start, end, the flow's inputs) and the running backfill's progress with pause/resume and
// delete (the /triggers routes; the scheduler runs the backfill).
import { useState, type FormEvent } from 'react';
import { ApiError, api, type FlowInput, type TriggerContext } from '../../../api';
import { DateTime } from '../../../components/DateTime';
import { EmptyState } from '../../../components/EmptyState';
import { ErrorBanner } from '../../../components/ErrorBanner';
import { ExecutionLink } from '../../../components/ExecutionLink';
import { TriggerActions } from '../../../components/TriggerActions';
import { useApi } from '../../../hooks';
import type { FlowTabProps } from '../tabs';

const isSchedule = (type: string): boolean => /(^|\.)Schedule$/.test(type);
/** A datetime-local value as an ISO date-time (the browser's zone). */
const isoOf = (local: string): string | undefined => (local ? new Date(local).toISOString() : undefined);

function BackfillForm({ t, inputs, onDone }: { t: TriggerContext; inputs: FlowInput[]; onDone(): void }) {
  const [start, setStart] = useState('');
  const [end, setEnd] = useState('');
  const [values, setValues] = useState<Record<string, string>>({});
  const [error, setError] = useState<unknown>();
  const field = (path: string): string | undefined => (error instanceof ApiError ? error.fieldMessage(path) : undefined);
  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError(undefined);
    const given = Object.fromEntries(Object.entries(values).filter(([, v]) => v !== ''));
    try {
      await api.startBackfill({ namespace: t.namespace, flowId: t.flowId, triggerId: t.triggerId }, {
        start: isoOf(start) ?? '', ...(end ? { end: isoOf(end) } : {}), ...(Object.keys(given).length ? { inputs: given } : {}),
      });
      onDone();
    } catch (err) { setError(err); }
  };
  const id = (s: string) => `backfill-${t.triggerId}-${s}`;
  return (
    <form className="form-grid" aria-label={`Backfill ${t.triggerId}`} onSubmit={(e) => void submit(e)}>
      <label htmlFor={id('start')}>Backfill start</label>
      <div>
        <input id={id('start')} type="datetime-local" step="1" required value={start} onChange={(e) => setStart(e.target.value)} />
        {field('backfill.start') && <div className="field-error" role="alert">{field('backfill.start')}</div>}
      </div>
      <label htmlFor={id('end')}>Backfill end</label>
      <div>
        <input id={id('end')} type="datetime-local" step="1" value={end} onChange={(e) => setEnd(e.target.value)} />
        {field('backfill.end') && <div className="field-error" role="alert">{field('backfill.end')}</div>}
      </div>
      {inputs.map((i) => (
        <InputRow key={i.id} input={i} htmlId={id(`input-${i.id}`)} value={values[i.id] ?? ''} error={field(`inputs.${i.id}`) ?? field(`backfill.inputs.${i.id}`)}
          onChange={(v) => setValues((cur) => ({ ...cur, [i.id]: v }))} />
      ))}
      <span />
      <div className="row-gap"><button type="submit" className="primary">Start backfill</button></div>
      {error !== undefined && <div className="span-2"><ErrorBanner error={error} /></div>}
    </form>
  );
}

function InputRow({ input, htmlId, value, error, onChange }: { input: FlowInput; htmlId: string; value: string; error?: string; onChange(v: string): void }) {
  const placeholder = input.defaults === undefined ? '' : typeof input.defaults === 'string' ? input.defaults : JSON.stringify(input.defaults);
  return (
    <>
      <label htmlFor={htmlId}>Input {input.id} <span className="muted">({input.type})</span></label>
      <div>
        <input id={htmlId} value={value} placeholder={placeholder} onChange={(e) => onChange(e.target.value)} />
        {error && <div className="field-error" role="alert">{error}</div>}
      </div>
    </>
  );
}

function Backfill({ t, onDone, onError }: { t: TriggerContext; onDone(): void; onError(err: unknown): void }) {
  const b = t.backfill!;
  const ref = { namespace: t.namespace, flowId: t.flowId, triggerId: t.triggerId };
  const act = (a: 'pause' | 'unpause' | 'delete') => () => { api.backfillAction(ref, a).then(onDone, onError); };
  return (
    <div className="backfill" role="group" aria-label={`Backfill of ${t.triggerId}`}>
      <p>
        Backfill {b.paused ? <span className="badge badge-warn">paused</span> : <span className="badge badge-run">running</span>}{' '}
        from <DateTime value={b.start} /> to {b.end ? <DateTime value={b.end} /> : 'now'}; next date <DateTime value={b.currentDate} />
      </p>
      <span className="row-gap">
        {b.paused
          ? <button type="button" onClick={act('unpause')} aria-label={`Resume backfill of ${t.triggerId}`}>Resume</button>
          : <button type="button" onClick={act('pause')} aria-label={`Pause backfill of ${t.triggerId}`}>Pause</button>}
        <button type="button" onClick={act('delete')} aria-label={`Delete backfill of ${t.triggerId}`}>Delete backfill</button>
      </span>
    </div>
  );
}

export function FlowTriggers({ flow }: FlowTabProps) {
  const list = useApi((signal) => api.flowTriggers(flow.namespace, flow.id, signal), [flow.namespace, flow.id, flow.revision]);
  const [error, setError] = useState<unknown>();
  const done = () => { setError(undefined); list.reload(); };
  return (
    <div className="stack">
      <ErrorBanner error={error ?? list.error} onRetry={list.reload} />
      {list.data?.results.length === 0 && <EmptyState title="This flow has no triggers" />}
      {list.data?.results.map((t) => (
        <section key={t.triggerId} className="panel" aria-label={`Trigger ${t.triggerId}`}>
          <div className="row-gap spread">
            <h2><code>{t.triggerId}</code> <span className="muted" title={t.type}>{t.type.split('.').pop()}</span></h2>
            <TriggerActions t={t} onDone={done} onError={setError} />
          </div>
          <dl className="facts">
            <dt>State</dt><dd>{t.disabled ? 'disabled' : 'enabled'}</dd>
            <dt>Last date</dt><dd><DateTime value={t.date} /></dd>
            <dt>Next date</dt><dd><DateTime value={t.nextExecutionDate} /></dd>
            <dt>Locked by</dt><dd>{t.executionId ? <ExecutionLink namespace={t.namespace} flowId={t.flowId} id={t.executionId} /> : '–'}</dd>
          </dl>
          {t.backfill && <Backfill t={t} onDone={done} onError={setError} />}
          {isSchedule(t.type) && !t.backfill && <BackfillForm t={t} inputs={flow.inputs ?? []} onDone={done} />}
        </section>
      ))}
      {list.loading && !list.data && <p className="muted" role="status">Loading…</p>}
    </div>
  );
}
