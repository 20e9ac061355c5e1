// core.kv.Set / Get / Delete / GetKeys: key-value store tasks. The run context's KV view enforces which namespaces a
// flow may reach (operator/tenancy: its own, unless ALLOWED_NAMESPACES grants more). Value typing is the store's.
import type { KVType } from '../store/types.js';
import type { RunContext, TaskResult } from './types.js';
import { plugin, renderBool, renderString, requireString } from './util.js';

const KV_TYPES: readonly KVType[] = ['STRING', 'NUMBER', 'BOOLEAN', 'DATETIME', 'DATE', 'DURATION', 'JSON'];

function targetNamespace(ctx: RunContext): string {
  return renderString(ctx, ctx.task.namespace) ?? ctx.flow.namespace;
}

function renderKvType(ctx: RunContext): KVType | undefined {
  const t = renderString(ctx, ctx.task.kvType)?.toUpperCase();
  if (t === undefined) return undefined;
  if (!KV_TYPES.includes(t as KVType)) throw new Error(`Invalid kvType '${t}'`);
  return t as KVType;
}

async function runSet(ctx: RunContext): Promise<TaskResult> {
  const key = requireString(ctx, 'key');
  const namespace = targetNamespace(ctx);
  const overwrite = renderBool(ctx, ctx.task.overwrite, true);
  const ttl = renderString(ctx, ctx.task.ttl);
  const rendered = ctx.renderTyped(ctx.task.value);
  const kvType = renderKvType(ctx);
  if (!overwrite && (await ctx.kv.get(namespace, key)) !== undefined) {
    throw new Error(`Cannot set value for key '${key}'. Key already exists and \`overwrite\` is set to \`false\`.`);
  }
  await ctx.kv.set({ namespace, key, value: rendered, type: kvType, ttl, overwrite });
  return { state: 'SUCCESS' };
}

async function runGet(ctx: RunContext): Promise<TaskResult> {
  const key = requireString(ctx, 'key');
  const namespace = targetNamespace(ctx);
  const errorOnMissing = renderBool(ctx, ctx.task.errorOnMissing, false);
  const entry = await ctx.kv.get(namespace, key);
  if (entry === undefined) {
    if (errorOnMissing) {
      throw new Error(`No value found for key '${key}' in namespace '${namespace}' and \`errorOnMissing\` is set to true`);
    }
    return { state: 'SUCCESS', outputs: {} };
  }
  return { state: 'SUCCESS', outputs: { value: entry.value } };
}

async function runDelete(ctx: RunContext): Promise<TaskResult> {
  const key = requireString(ctx, 'key');
  const namespace = targetNamespace(ctx);
  const errorOnMissing = renderBool(ctx, ctx.task.errorOnMissing, false);
  const deleted = await ctx.kv.delete(namespace, key);
  if (!deleted && errorOnMissing) {
    throw new Error(`No key '${key}' found in namespace '${namespace}' and \`errorOnMissing\` is set to true`);
  }
  return { state: 'SUCCESS', outputs: { deleted } };
}

async function runGetKeys(ctx: RunContext): Promise<TaskResult> {
  const namespace = targetNamespace(ctx);
  const prefix = renderString(ctx, ctx.task.prefix) ?? '';
  const keys = (await ctx.kv.list(namespace)).map((e) => e.key).filter((k) => k.startsWith(prefix));
  return { state: 'SUCCESS', outputs: { keys } };
}

export const kvSetPlugin = plugin('core.kv.Set', runSet, { inline: true });
export const kvGetPlugin = plugin('core.kv.Get', runGet, { inline: true });
export const kvDeletePlugin = plugin('core.kv.Delete', runDelete, { inline: true });
export const kvGetKeysPlugin = plugin('core.kv.GetKeys', runGetKeys, { inline: true });
