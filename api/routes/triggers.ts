// /api/v1/triggers (Kestra's routes): list the triggers of a namespace or a flow with their durable state (last and
// next dates, lock, backfill), enable/disable one, start a backfill of a Schedule over a date range, pause, resume or
// delete it, and unlock a trigger. The API only writes trigger state (compare-and-set); the scheduler acts on it.
import type { Router, RouterContext } from '@koa/router';
import type { Flow, Label, Trigger } from '../../operator/core/types.js';
import { isSystemLabel } from '../../operator/core/types.js';
import { TRIGGER_TYPES, withWrittenTypes } from '../../operator/model/index.js';
import {
  BackfillError, deleteBackfill, formatDate, nextExecutionDate, pauseBackfill, startBackfill, unlock, type ScheduleState,
} from '../../operator/triggers/schedule/index.js';
import { type FilterRow, rowMatches } from '../../operator/store/filters.js';
import { ConflictError, type FlowRecord, type TriggerStateRecord } from '../../operator/store/types.js';
import { readJson } from '../body.js';
import type { ApiDeps } from '../deps.js';
import { badRequest, HttpError, notFound } from '../errors.js';
import { legacyFilters, searchFilters } from '../filters.js';
import { paging, parseLabelList, queryOne } from '../query.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const isRealtime = (t: Trigger) => t.type.endsWith('RealtimeTrigger');
const isSchedule = (t: Trigger) => t.type === TRIGGER_TYPES.schedule;

/** Kestra's trigger context: what the Triggers tab shows for one trigger. */
/** The flow's triggers with their types as written in its source (the engine keeps canonical names). */
const writtenTriggers = (rec: FlowRecord): Trigger[] =>
  withWrittenTypes(rec.flow, rec.source, `${rec.namespace}\u0000${rec.id}\u0000${rec.revision}`).triggers ?? [];

/** Kestra's trigger context: what the Triggers tab shows for one trigger (`type` as written when given). */
export function triggerContext(flow: Flow, trigger: Trigger, rec: TriggerStateRecord | undefined, now: Date, writtenType?: string): Obj {
  const state = (rec?.state ?? {}) as ScheduleState;
  const disabled = !!rec?.disabled || !!trigger.disabled;
  const tz = typeof trigger.timezone === 'string' ? trigger.timezone : undefined;
  const out: Obj = {
    namespace: flow.namespace, flowId: flow.id, triggerId: trigger.id, type: writtenType ?? trigger.type, disabled,
    updatedDate: rec?.updated ?? null, executionId: state.executionId ?? null,
  };
  if (isSchedule(trigger)) {
    out.date = state.date ? formatDate(new Date(state.date), tz) : null;
    const next = disabled || flow.disabled ? undefined : nextExecutionDate(state, trigger, now);
    out.nextExecutionDate = next ? formatDate(next, tz) : null;
    out.backfill = state.backfill ? {
      start: state.backfill.start, end: state.backfill.end ?? null, currentDate: state.backfill.currentDate,
      paused: state.backfill.paused, inputs: state.backfill.inputs ?? null, labels: state.backfill.labels ?? null,
    } : null;
  }
  return out;
}

function str(body: Obj, field: string): string {
  const v = body[field];
  if (typeof v !== 'string' || v.trim() === '') throw badRequest(`\`${field}\` is required`, field);
  return v;
}

async function bodyObj(ctx: RouterContext, deps: ApiDeps): Promise<Obj> {
  const body = await readJson(ctx, deps.maxBodyBytes);
  if (!isObj(body)) throw badRequest('The request body must be a JSON object');
  return body;
}

interface Target { record: FlowRecord; trigger: Trigger }

async function findTrigger(deps: ApiDeps, namespace: string, flowId: string, triggerId: string): Promise<Target> {
  const record = await deps.stores.flows.get(namespace, flowId);
  if (!record) throw notFound(`Flow of trigger ${triggerId} not found`);
  const trigger = (record.flow.triggers ?? []).find((t) => t.id === triggerId);
  if (!trigger) throw notFound(`Flow ${flowId} has no trigger ${triggerId}`);
  return { record, trigger };
}

/** Read-modify-write of one trigger's state with compare-and-set (retried when the scheduler wrote in between). */
async function updateState(deps: ApiDeps, t: Target, change: (rec: TriggerStateRecord | undefined) => { disabled: boolean; state: Obj }): Promise<TriggerStateRecord> {
  const { namespace, id: flowId } = t.record.flow;
  for (let attempt = 0; ; attempt++) {
    const rec = await deps.stores.triggers.get(namespace, flowId, t.trigger.id);
    const next = change(rec);
    try {
      return await deps.stores.triggers.put({ namespace, flowId, triggerId: t.trigger.id, ...next }, rec?.version ?? 0);
    } catch (err) {
      if (!(err instanceof ConflictError) || attempt >= 5) throw err;
    }
  }
}

/** A BackfillError as a 400 (naming its field when it has one). */
function scheduleOp<T>(f: () => T): T {
  try {
    return f();
  } catch (err) {
    if (err instanceof BackfillError) throw badRequest(err.message, err.field);
    throw err;
  }
}

function parseDate(value: unknown, field: string): Date {
  const d = typeof value === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(value) ? new Date(value) : undefined;
  if (!d || Number.isNaN(d.getTime())) throw badRequest(`\`${String(value)}\` is not an ISO 8601 date-time`, field);
  return d;
}

function parseLabels(value: unknown): Label[] | undefined {
  if (value === undefined || value === null) return undefined;
  const labels = parseLabelList(value, 'backfill.labels');
  labels.forEach((l, i) => {
    if (isSystemLabel(l.key)) throw badRequest(`\`${l.key}\`: system labels cannot be set`, `backfill.labels[${i}]`);
  });
  return labels;
}

function backfillRequest(raw: unknown): { start: Date; end?: Date; inputs?: Obj; labels?: Label[] } {
  if (!isObj(raw)) throw badRequest('`backfill` must be an object', 'backfill');
  const start = parseDate(raw.start, 'backfill.start');
  const end = raw.end === undefined || raw.end === null ? undefined : parseDate(raw.end, 'backfill.end');
  if (raw.inputs !== undefined && raw.inputs !== null && !isObj(raw.inputs)) throw badRequest('`backfill.inputs` must be an object', 'backfill.inputs');
  const labels = parseLabels(raw.labels);
  return { start, ...(end ? { end } : {}), ...(isObj(raw.inputs) ? { inputs: raw.inputs } : {}), ...(labels ? { labels } : {}) };
}

/** A trigger as the search filters see it (dates: its next execution date, as Kestra's; no worker runs one here). */
function triggerRow(t: Trigger, context: Obj): FilterRow {
  const ns = String(context.namespace);
  const flowId = String(context.flowId);
  const next = typeof context.nextExecutionDate === 'string' ? context.nextExecutionDate : undefined;
  return {
    text: { namespace: ns, flowId, triggerId: t.id, triggerState: context.disabled ? 'disabled' : 'enabled' },
    dates: next ? { startDate: next, endDate: next } : {},
    q: [ns, flowId, t.id],
  };
}

const inNamespace = (ns: string, prefix?: string) => !prefix || ns === prefix || ns.startsWith(`${prefix}.`);

/** Adds the trigger routes to `r` (mounted under /api/v1). */
export function registerTriggerRoutes(r: Router, deps: ApiDeps): void {
  const { flows, triggers } = deps.stores;

  const target = async (ctx: RouterContext): Promise<Target> => {
    const body = await bodyObj(ctx, deps);
    return findTrigger(deps, str(body, 'namespace'), str(body, 'flowId'), str(body, 'triggerId'));
  };
  const view = async (t: Target, rec?: TriggerStateRecord) =>
    triggerContext(t.record.flow, t.trigger, rec ?? await triggers.get(t.record.namespace, t.record.id, t.trigger.id), new Date(),
      writtenTriggers(t.record).find((w) => w.id === t.trigger.id)?.type);

  r.get('/triggers/search', async (ctx) => {
    const namespace = queryOne(ctx, 'namespace');
    const flowId = queryOne(ctx, 'flowId');
    const q = queryOne(ctx, 'q');
    const filters = [
      ...(q ? [{ kind: 'q', op: 'EQUALS', value: q } as const] : []),
      ...legacyFilters(ctx, ['scope', 'triggerId', 'workerId'], deps.limits),
      ...searchFilters(ctx, 'triggers', deps.limits),
    ];
    const { limit, offset } = paging(ctx);
    const states = new Map((await triggers.list(namespace ? { namespace } : {})).map((s) => [`${s.namespace}/${s.flowId}/${s.triggerId}`, s]));
    const now = new Date();
    const all = (await flows.all())
      .filter((f) => inNamespace(f.namespace, namespace) && (!flowId || f.id === flowId))
      .sort((a, b) => a.namespace.localeCompare(b.namespace) || a.id.localeCompare(b.id))
      .flatMap((f) => {
        const written = writtenTriggers(f);
        return (f.flow.triggers ?? []).map((t, i) => {
          const context = triggerContext(f.flow, t, states.get(`${f.namespace}/${f.id}/${t.id}`), now, written[i]?.type);
          return { t, written: written[i] ?? t, context };
        });
      })
      .filter(({ t, context }) => rowMatches(filters, triggerRow(t, context)));
    ctx.body = {
      results: all.slice(offset, offset + limit).map(({ written, context }) => ({ abstractTrigger: written, triggerContext: context })),
      total: all.length,
    };
  });

  r.get('/triggers/:namespace/:flowId', async (ctx) => {
    const { namespace, flowId } = ctx.params as { namespace: string; flowId: string };
    const record = await flows.get(namespace, flowId);
    if (!record) throw notFound(`Flow ${namespace}.${flowId} not found`);
    const { limit, offset } = paging(ctx);
    const states = new Map((await triggers.list({ namespace, flowId })).map((s) => [s.triggerId, s]));
    const written = writtenTriggers(record);
    const list = (record.flow.triggers ?? []).map((t, i) => triggerContext(record.flow, t, states.get(t.id), new Date(), written[i]?.type));
    ctx.body = { results: list.slice(offset, offset + limit), total: list.length };
  });

  // Update a trigger: `backfill` starts a backfill, otherwise `disabled` enables or disables it.
  r.put('/triggers', async (ctx) => {
    const body = await bodyObj(ctx, deps);
    const t = await findTrigger(deps, str(body, 'namespace'), str(body, 'flowId'), str(body, 'triggerId'));
    if (isRealtime(t.trigger)) throw badRequest('Realtime triggers can not be updated through the API, please edit the trigger from the flow.');
    let rec: TriggerStateRecord;
    if (body.backfill !== undefined && body.backfill !== null) {
      if (!isSchedule(t.trigger)) throw badRequest(`Trigger ${t.trigger.id} is not a Schedule: only schedules can be backfilled`, 'backfill');
      const req = backfillRequest(body.backfill);
      rec = await updateState(deps, t, (cur) => ({
        disabled: cur?.disabled ?? false,
        state: scheduleOp(() => startBackfill((cur?.state ?? {}) as ScheduleState, t.trigger, req, new Date())) as Obj,
      }));
    } else {
      if (typeof body.disabled !== 'boolean') throw badRequest('`disabled` must be true or false', 'disabled');
      const disabled = body.disabled;
      rec = await updateState(deps, t, (cur) => ({ disabled, state: cur?.state ?? {} }));
    }
    ctx.body = await view(t, rec);
  });

  r.post('/triggers/set-disabled/by-triggers', async (ctx) => {
    const body = await bodyObj(ctx, deps);
    if (!Array.isArray(body.triggers) || body.triggers.length === 0) throw badRequest('`triggers` must be a non-empty list', 'triggers');
    if (typeof body.disabled !== 'boolean') throw badRequest('`disabled` must be true or false', 'disabled');
    const disabled = body.disabled;
    let count = 0;
    for (const [i, raw] of body.triggers.entries()) {
      if (!isObj(raw)) throw badRequest(`\`triggers[${i}]\` must be an object`, `triggers[${i}]`);
      const t = await findTrigger(deps, str(raw, 'namespace'), str(raw, 'flowId'), str(raw, 'triggerId')).catch(() => undefined);
      if (!t || isRealtime(t.trigger)) continue; // as Kestra: missing and realtime triggers are ignored in bulk
      await updateState(deps, t, (cur) => ({ disabled, state: cur?.state ?? {} }));
      count++;
    }
    ctx.body = { count };
  });

  const backfillAction = (op: (s: ScheduleState) => ScheduleState) => async (ctx: RouterContext) => {
    const t = await target(ctx);
    if (!isSchedule(t.trigger)) throw badRequest('No backfill found');
    const rec = await updateState(deps, t, (cur) => ({
      disabled: cur?.disabled ?? false, state: scheduleOp(() => op((cur?.state ?? {}) as ScheduleState)) as Obj,
    }));
    ctx.body = await view(t, rec);
  };
  r.put('/triggers/backfill/pause', backfillAction((s) => pauseBackfill(s, true)));
  r.put('/triggers/backfill/unpause', backfillAction((s) => pauseBackfill(s, false)));
  r.post('/triggers/backfill/delete', backfillAction(deleteBackfill));
  r.put('/triggers/backfill/delete', backfillAction(deleteBackfill));

  r.post('/triggers/:namespace/:flowId/:triggerId/unlock', async (ctx) => {
    const { namespace, flowId, triggerId } = ctx.params as { namespace: string; flowId: string; triggerId: string };
    const t = await findTrigger(deps, namespace, flowId, triggerId);
    const current = await triggers.get(namespace, flowId, triggerId);
    if (!current) throw notFound(`Trigger ${triggerId} has no state yet`);
    const rec = await updateState(deps, t, (cur) => {
      if (!cur?.state.executionId) throw new HttpError(409, 'Trigger is not locked');
      return { disabled: cur.disabled, state: unlock(cur.state as ScheduleState) as Obj };
    });
    ctx.body = await view(t, rec);
  });
}
