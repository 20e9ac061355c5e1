// The KV store a task attempt sees: entries of its own namespace, and of the namespaces ALLOWED_NAMESPACES grants to
// it. Every KV task (Set, Get, Delete, GetKeys) goes through this view, so a `namespace:` property naming another
// tenant's namespace is refused with the rule, whatever the plugin does.
import type { KVStore } from '../store/types.js';
import { namespaceDenied, type NamespaceGrants } from './namespaces.js';

/** A refusal of the KV view: permanent, and a 403 where an HTTP layer shows it. */
export class KvAccessError extends Error {
  readonly status = 403;
  constructor(message: string) { super(message); this.name = 'KvAccessError'; }
}

export function scopedKv(kv: KVStore, fromNamespace: string, grants: NamespaceGrants): KVStore {
  const check = (namespace: string, what: string): string => {
    const denied = namespaceDenied(fromNamespace, namespace, what, grants);
    if (denied) throw new KvAccessError(denied);
    return namespace;
  };
  return {
    get: (namespace, key) => kv.get(check(namespace, `KV key '${key}'`), key),
    getSync: (namespace, key) => kv.getSync(check(namespace, `KV key '${key}'`), key),
    set: (entry) => kv.set({ ...entry, namespace: check(entry.namespace, `KV key '${entry.key}'`) }),
    delete: (namespace, key) => kv.delete(check(namespace, `KV key '${key}'`), key),
    list: (namespace) => kv.list(check(namespace, 'The KV store')),
  };
}
