// /api/v1/executions/webhook/{namespace}/{flowId}/{key}: starts an execution when the key matches an enabled
// Webhook trigger of an enabled flow (constant-time comparison); the request body, headers and query become
// `trigger.body`, `trigger.headers` and `trigger.parameters` (maps of lists, as in Kestra).
import type { Router, RouterContext } from '@koa/router';
import { createHash, timingSafeEqual } from 'node:crypto';
import { newId } from '../../operator/core/ids.js';
import type { Flow, Trigger } from '../../operator/core/types.js';
import { readText } from '../body.js';
import type { ApiDeps } from '../deps.js';
import { notFound } from '../errors.js';
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

/** JSON object/array bodies are parsed, anything else stays text; no body is null. */
export function webhookBody(text: string): unknown {
  if (text === '') return null;
  const t = text.trim();
  if (t.startsWith('{') || t.startsWith('[')) {
    try {
      return JSON.parse(t);
    } catch {
      return text;
    }
  }
  return text;
}

function listMap(src: Record<string, string | string[] | undefined>): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const [k, v] of Object.entries(src)) if (v !== undefined) out[k] = Array.isArray(v) ? v : [v];
  return out;
}

async function handleWebhook(ctx: RouterContext, deps: ApiDeps): Promise<void> {
  const { namespace, flowId, key } = ctx.params as { namespace: string; flowId: string; key: string };
  const record = await deps.stores.flows.get(namespace, flowId);
  const flow = record && !record.deleted && !record.flow.disabled ? { ...record.flow, revision: record.revision } : undefined;
  const trigger = flow ? findWebhook(flow, key) : undefined;
  if (!flow || !trigger) throw notFound(`No webhook found for flow '${namespace}.${flowId}' with this key`);
  const text = await readText(ctx, deps.maxBodyBytes);
  const variables = {
    body: webhookBody(text),
    headers: listMap(ctx.headers),
    parameters: listMap(ctx.query),
  };
  const id = newId();
  ctx.body = await launch(deps.stores, {
    flow, id, provided: { values: {}, files: [] }, trigger: { id: trigger.id, type: trigger.type, variables },
  });
}

/** Adds the webhook routes (GET, POST, PUT) to `r` (mounted under /api/v1). */
export function registerWebhookRoutes(r: Router, deps: ApiDeps): void {
  const path = '/executions/webhook/:namespace/:flowId/:key';
  r.get(path, (ctx) => handleWebhook(ctx, deps));
  r.post(path, (ctx) => handleWebhook(ctx, deps));
  r.put(path, (ctx) => handleWebhook(ctx, deps));
}
