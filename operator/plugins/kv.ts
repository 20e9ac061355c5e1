// core.kv.Set / Get / Delete / GetKeys: key-value store tasks. Cross-namespace access is limited (embedded mode) to
// the flow's namespace, its parents and its children. Value typing (kvType, inference) is the store's.
import type { KVType } from '../store/types.js';
import type { RunContext, TaskResult } from './types.js';
import { plugin, renderBool, renderString, requireString } from './util.js';

const KV_TYPES: readonly KVType[] = ['STRING', 'NUMBER', 'BOOLEAN', 'DATETIME', 'DATE', 'DURATION', 'JSON'];

/** Whether a flow in `flowNamespace` may read or write KV entries of `target`: same, parent or child namespace. */
export function isNamespaceAllowed(flowNamespace: string, target: string): boolean {
  return target === flowNamespace || flowNamespace.startsWith(target + '.') || target.startsWith(flowNamespace + '.');
}

function targetNamespace(ctx: RunContext): string {
  const ns = renderString(ctx, ctx.task.namespace) ?? ctx.flow.namespace;
  if (!isNamespaceAllowed(ctx.flow.namespace, ns)) {
    throw new Error(
      `Namespace '${ns}' is not allowed from namespace '${ctx.flow.namespace}': ` +
        'only the flow namespace, its parents and its children can be accessed',
    );
  }
  return ns;
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

export const kvSetPlugin = plugin('core.kv.Set', runSet);
export const kvGetPlugin = plugin('core.kv.Get', runGet);
export const kvDeletePlugin = plugin('core.kv.Delete', runDelete);
export const kvGetKeysPlugin = plugin('core.kv.GetKeys', runGetKeys);
