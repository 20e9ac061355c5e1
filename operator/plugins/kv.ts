// core.kv.Set / Get / Delete / GetKeys: key-value store tasks. The run context's KV view enforces which namespaces a
// flow may reach (operator/tenancy: its own, unless ALLOWED_NAMESPACES grants more). Value typing is the store's.
import type { KVType } from '../store/types.js';
import { definePlugin, p } from './define.js';

const KV_TYPES = ['STRING', 'NUMBER', 'BOOLEAN', 'DATETIME', 'DATE', 'DURATION', 'JSON'] as const satisfies readonly KVType[];

const key = () => p.string().required().describe('The key.');
const namespace = () => p.string().describe('The namespace of the KV store (default: the flow\'s; another only as ALLOWED_NAMESPACES grants).');
const errorOnMissing = () => p.boolean().default(false).describe('Fail when the key does not exist.');

export const kvSetDefinition = definePlugin({
  type: 'core.kv.Set',
  title: 'Set a KV pair',
  description: 'Stores a value under a key in a namespace\'s KV store.',
  properties: {
    key: key(),
    value: p.any().required().describe('The value (rendered; an expression may yield a number, a map...).'),
    namespace: namespace(),
    overwrite: p.boolean().default(true).describe('Replace an existing value (false: fail when the key exists).'),
    ttl: p.durationText().describe('How long the pair lives (ISO 8601).'),
    kvType: p.enum(KV_TYPES).describe('The type the value is stored as (default: from the value).'),
  },
  examples: [{ title: 'Remember a count', code: 'id: set\ntype: ai.service.plugin.core.kv.Set\nkey: last_count\nvalue: "{{ outputs.count.value }}"\nkvType: NUMBER\n' }],
  inline: true,
  async run(ctx, props) {
    const ns = props.namespace ?? ctx.flow.namespace;
    if (!props.overwrite && (await ctx.kv.get(ns, props.key)) !== undefined) {
      throw new Error(`Cannot set value for key '${props.key}'. Key already exists and \`overwrite\` is set to \`false\`.`);
    }
    await ctx.kv.set({ namespace: ns, key: props.key, value: props.value, type: props.kvType, ttl: props.ttl, overwrite: props.overwrite });
    return { state: 'SUCCESS' };
  },
});

export const kvGetDefinition = definePlugin({
  type: 'core.kv.Get',
  title: 'Get a KV value',
  description: 'Reads the value of a key of a namespace\'s KV store into the `value` output (absent when the key does not exist).',
  properties: { key: key(), namespace: namespace(), errorOnMissing: errorOnMissing() },
  outputs: { value: { type: 'any', description: 'The stored value, typed as stored.' } },
  examples: [{ title: 'Read a value', code: 'id: get\ntype: ai.service.plugin.core.kv.Get\nkey: last_count\n' }],
  inline: true,
  async run(ctx, props) {
    const ns = props.namespace ?? ctx.flow.namespace;
    const entry = await ctx.kv.get(ns, props.key);
    if (entry === undefined) {
      if (props.errorOnMissing) {
        throw new Error(`No value found for key '${props.key}' in namespace '${ns}' and \`errorOnMissing\` is set to true`);
      }
      return { state: 'SUCCESS', outputs: {} };
    }
    return { state: 'SUCCESS', outputs: { value: entry.value } };
  },
});

export const kvDeleteDefinition = definePlugin({
  type: 'core.kv.Delete',
  title: 'Delete a KV pair',
  description: 'Deletes a key of a namespace\'s KV store.',
  properties: { key: key(), namespace: namespace(), errorOnMissing: errorOnMissing() },
  outputs: { deleted: { type: 'boolean', description: 'Whether the key existed.' } },
  examples: [{ title: 'Delete a key', code: 'id: del\ntype: ai.service.plugin.core.kv.Delete\nkey: last_count\n' }],
  inline: true,
  async run(ctx, props) {
    const ns = props.namespace ?? ctx.flow.namespace;
    const deleted = await ctx.kv.delete(ns, props.key);
    if (!deleted && props.errorOnMissing) {
      throw new Error(`No key '${props.key}' found in namespace '${ns}' and \`errorOnMissing\` is set to true`);
    }
    return { state: 'SUCCESS', outputs: { deleted } };
  },
});

export const kvGetKeysDefinition = definePlugin({
  type: 'core.kv.GetKeys',
  title: 'List KV keys',
  description: 'Lists the keys of a namespace\'s KV store, optionally only those starting with `prefix`.',
  properties: { prefix: p.string().describe('Only keys starting with it.'), namespace: namespace() },
  outputs: { keys: { type: 'array', description: 'The keys.' } },
  examples: [{ title: 'List keys', code: 'id: keys\ntype: ai.service.plugin.core.kv.GetKeys\nprefix: last_\n' }],
  inline: true,
  async run(ctx, props) {
    const ns = props.namespace ?? ctx.flow.namespace;
    const prefix = props.prefix ?? '';
    const keys = (await ctx.kv.list(ns)).map((e) => e.key).filter((k) => k.startsWith(prefix));
    return { state: 'SUCCESS', outputs: { keys } };
  },
});

export const kvSetPlugin = kvSetDefinition.runnable;
export const kvGetPlugin = kvGetDefinition.runnable;
export const kvDeletePlugin = kvDeleteDefinition.runnable;
export const kvGetKeysPlugin = kvGetKeysDefinition.runnable;
