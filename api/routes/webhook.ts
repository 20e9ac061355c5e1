// /api/v1/executions/webhook/{namespace}/{flowId}/{key}: starts an execution when the key matches an enabled
// Webhook trigger of an enabled flow (constant-time comparison); the request body, headers and query become
// `trigger.body`, `trigger.headers` and `trigger.parameters` (maps of lists, as in Kestra). The trigger's
// `conditions` are evaluated first: when they do not hold the answer is 204 No Content and nothing is created (as
// Kestra); its `inputs` are rendered against `trigger.*` and validated like the inputs of any execution.
import type { Router, RouterContext } from '@koa/router';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Renderer } from '../../operator/core/engine-types.js';
import { newId } from '../../operator/core/ids.js';
import { dict, parseJsonSafe } from '../../operator/core/keyed.js';
import type { Execution, Flow, Trigger } from '../../operator/core/types.js';
import { createRenderer } from '../../operator/expr/index.js';
import { createConditionEvaluator } from '../../operator/triggers/conditions/evaluator.js';
import { labelList } from '../../operator/core/execution-conditions.js';
import { triggerRenderVars } from '../../operator/triggers/create.js';
import type { ConditionEvaluator } from '../../operator/triggers/types.js';
import { readText } from '../body.js';
import type { ApiDeps } from '../deps.js';
import { badRequest, notFound } from '../errors.js';
import { executionsJson } from '../execution-json.js';
import { launch } from '../launch.js';

export const WEBHOOK_TYPE = 'ai.service.plugin.core.trigger.Webhook';
const WEBHOOK_ALIASES = new Set([WEBHOOK_TYPE, 'io.kestra.plugin.core.trigger.Webhook', 'io.kestra.core.models.triggers.types.Webhook']);

const sha256 = (s: string): Buffer => createHash('sha256').update(s, 'utf8').digest();

/** Constant-time equality of two secrets (hashing first makes the lengths equal). */
export function keysEqual(a: string, b: string): boolean {
  return timingSafeEqual(sha256(a), sha256(b));
}

/** The enabled Webhook trigger of the flow whose key equals `key`. */
export function findWebhook(flow: Flow, key: string): Trigger | undefined {
  let found: Trigger | undefined;
  for (const t of flow.triggers ?? []) {
    const isWebhook = WEBHOOK_ALIASES.has(t.type) || t.type.endsWith('.core.trigger.Webhook');
    if (!isWebhook || t.disabled || typeof t.key !== 'string') continue;
    if (keysEqual(t.key, key) && !found) found = t; // no early exit: same work for every trigger
  }
  return found;
}

/** JSON object/array bodies are parsed (objects without prototypes), anything else stays text; no body is null. */
export function webhookBody(text: string): unknown {
  if (text === '') return null;
  const t = text.trim();
  if (t.startsWith('{') || t.startsWith('[')) {
    try {
      return parseJsonSafe(t);
    } catch {
      return text;
    }
  }
  return text;
}

function listMap(src: Record<string, string | string[] | undefined>): Record<string, string[]> {
  const out = dict<string[]>();
  for (const [k, v] of Object.entries(src)) if (v !== undefined) out[k] = Array.isArray(v) ? v : [v];
  return out;
}

/** The execution the webhook would create, for execution conditions (labels of the flow, state CREATED). */
function wouldBe(flow: Flow, id: string, now: Date): Execution {
  const date = now.toISOString();
  return {
    id, namespace: flow.namespace, flowId: flow.id, flowRevision: flow.revision ?? 1, originalId: id,
    state: { current: 'CREATED', histories: [{ state: 'CREATED', date }], startDate: date },
    labels: labelList(flow.labels), inputs: {}, taskRunList: [],
  };
}

interface WebhookServices { conditions: ConditionEvaluator; renderer: Renderer }

/** The evaluator and renderer given by the service, or defaults without secrets (tests, API-only use). */
function services(deps: ApiDeps): WebhookServices {
  const renderer = deps.renderer ?? createRenderer();
  const conditions = deps.conditions ?? createConditionEvaluator({
    stores: deps.stores, renderer: { ...renderer, forSecrets: () => renderer }, clock: () => new Date(), env: {},
    onError: (err, where) => console.warn(`[webhook] ${where}: ${(err as Error)?.message ?? String(err)}`),
  });
  return { conditions, renderer };
}

async function handleWebhook(ctx: RouterContext, deps: ApiDeps, svc: WebhookServices): Promise<void> {
  const { namespace, flowId, key } = ctx.params as { namespace: string; flowId: string; key: string };
  const record = await deps.stores.flows.get(namespace, flowId);
  const flow = record && !record.deleted && !record.flow.disabled ? { ...record.flow, revision: record.revision } : undefined;
  const found = flow ? findWebhook(flow, key) : undefined;
  const trigger = found && !(await deps.stores.triggers.get(namespace, flowId, found.id))?.disabled ? found : undefined;
  if (!flow || !trigger) throw notFound(`No webhook found for flow '${namespace}.${flowId}' with this key`);
  const text = await readText(ctx, deps.maxBodyBytes);
  const variables = {
    body: webhookBody(text),
    headers: listMap(ctx.headers),
    parameters: listMap(ctx.query),
  };
  const id = newId();
  const now = new Date();
  const conditions = Array.isArray(trigger.conditions) ? trigger.conditions : [];
  if (conditions.length > 0) {
    const execution = wouldBe(flow, id, now);
    if (!(await svc.conditions(conditions, { flow, trigger, date: now, execution, variables: { trigger: variables } }))) {
      ctx.status = 204; // conditions not met: no execution (Kestra answers 204 No Content too)
      return;
    }
  }
  const vars = { ...triggerRenderVars(flow, variables), execution: { id } };
  let values: Record<string, unknown> = {};
  if (trigger.inputs && typeof trigger.inputs === 'object') {
    try {
      values = svc.renderer.renderValue(trigger.inputs as Record<string, unknown>, vars);
    } catch (err) {
      throw badRequest(`Cannot render the webhook inputs: ${(err as Error).message}`, 'inputs');
    }
  }
  const execution = await launch(deps, {
    flow, id, provided: { values, files: [] }, trigger: { id: trigger.id, type: trigger.type, variables },
  });
  ctx.body = (await executionsJson(deps.stores, [execution]))[0];
}

/** Adds the webhook routes (GET, POST, PUT) to `r` (mounted under /api/v1). */
export function registerWebhookRoutes(r: Router, deps: ApiDeps): void {
  const path = '/executions/webhook/:namespace/:flowId/:key';
  const svc = services(deps);
  r.get(path, (ctx) => handleWebhook(ctx, deps, svc));
  r.post(path, (ctx) => handleWebhook(ctx, deps, svc));
  r.put(path, (ctx) => handleWebhook(ctx, deps, svc));
}
