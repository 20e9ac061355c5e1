// The executions a task attempt may read (the notifications' *Execution tasks summarise one by id): its own, or one
// of its namespace or of a namespace ALLOWED_NAMESPACES grants to it. Another tenant's execution reads as absent, so
// guessing ids tells nothing.
import type { Execution } from '../core/types.js';
import type { ExecutionStore } from '../store/types.js';
import { namespaceAllowed, type NamespaceGrants } from './namespaces.js';

export interface ExecutionReader {
  /** The execution of that id when it exists and this attempt may read it, else undefined. */
  get(id: string): Promise<Execution | undefined>;
}

export function scopedExecutions(store: Pick<ExecutionStore, 'get'>, fromNamespace: string, grants: NamespaceGrants): ExecutionReader {
  return {
    async get(id) {
      const found = await store.get(id);
      if (!found || !namespaceAllowed(fromNamespace, found.execution.namespace, grants)) return undefined;
      return found.execution;
    },
  };
}
