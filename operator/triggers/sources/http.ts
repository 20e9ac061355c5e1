// HTTP polling trigger (`core.http.Trigger`): calls `uri` at every interval and starts an execution when
// `responseCondition` (default `{{ response.statusCode < 400 }}`) renders true against `response.{statusCode, body,
// headers}`. Outputs: `trigger.uri`, `trigger.code` / `trigger.statusCode`, `trigger.body` (text), `trigger.headers`.
import { dict } from '../../core/keyed.js';
import { PLUGIN_TRIGGER_TYPES, pluginTriggerSchema } from '../../model/schema-triggers.js';
import { durationMs, isRecord } from '../../plugins/util.js';
import type { PollingTriggerPlugin } from '../types.js';
import { str } from './util.js';
import { timeoutSignal } from '../../faults.js';

export const DEFAULT_RESPONSE_CONDITION = '{{ response.statusCode < 400 }}';
/** Bodies larger than this are cut (the execution record must stay small). */
const MAX_BODY = 1024 * 1024;

export const httpTrigger: PollingTriggerPlugin = {
  kind: 'polling',
  type: PLUGIN_TRIGGER_TYPES.http,
  schema: pluginTriggerSchema(PLUGIN_TRIGGER_TYPES.http),
  defaultInterval: 'PT60S',
  async poll(ctx) {
    const t = ctx.trigger;
    // Kestra stores the body encrypted in the trigger variables with its server-wide encryption key; flowpilot has no
    // such key, so a body asked to be encrypted is refused rather than stored in clear.
    if (t.encryptBody !== undefined && String(ctx.render(t.encryptBody)) === 'true') {
      throw new Error(`triggers.${t.id}.encryptBody: encrypted trigger outputs are not supported (no encryption key is configured); remove encryptBody or set it to false`);
    }
    const uri = str(ctx, t.uri, 'uri')!;
    const method = String(ctx.render(t.method ?? 'GET')).toUpperCase();
    const headers = dict<string>();
    const rendered = ctx.render(t.headers ?? {});
    if (isRecord(rendered)) for (const [k, v] of Object.entries(rendered)) headers[k] = String(v);
    if (t.contentType !== undefined) headers['content-type'] = String(ctx.render(t.contentType));
    let body: string | undefined;
    if (t.body !== undefined && method !== 'GET' && method !== 'HEAD') body = String(ctx.render(t.body));
    else if (isRecord(t.formData)) body = new URLSearchParams(Object.entries(ctx.render(t.formData) as Record<string, unknown>).map(([k, v]) => [k, String(v)])).toString();
    const options = isRecord(t.options) ? t.options : {};
    const timeout = durationMs(String(ctx.render(t.timeout ?? options.readTimeout ?? 'PT30S')));
    const res = await fetch(uri, { method, headers, ...(body !== undefined ? { body } : {}), signal: AbortSignal.any([ctx.signal, timeoutSignal(timeout)]) });
    let text = await res.text();
    if (text.length > MAX_BODY) text = text.slice(0, MAX_BODY);
    const resHeaders = dict<string[]>(); // the server chose the names
    res.headers.forEach((v, k) => { (resHeaders[k] ??= []).push(v); });
    const response = { statusCode: res.status, code: res.status, body: text, headers: resHeaders };
    const verdict = String(ctx.render(t.responseCondition ?? DEFAULT_RESPONSE_CONDITION, { response })).trim();
    if (verdict !== 'true') return undefined;
    return { event: { variables: { uri, code: res.status, statusCode: res.status, body: text, headers: resHeaders } } };
  },
};
