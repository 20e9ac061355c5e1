// The namespace files a task attempt sees: those of its execution's namespace, or of a namespace ALLOWED_NAMESPACES
// grants it (a script's `namespaceFiles.namespaces`); read only. Anything else is refused naming the namespace and the rule.
import { limitsFromEnv, type Limits } from '../core/limits.js';
import { NamespaceFiles, type NamespaceFileEntry } from '../storage/namespace-files.js';
import type { InternalStorage } from '../store/types.js';
import { namespaceDenied, type NamespaceGrants } from './namespaces.js';
import { StorageAccessError } from './scoped-storage.js';

export interface NamespaceFilesView {
  /** Every file of `namespace` (paths without a leading slash), bounded by NAMESPACE_FILES_MAX_COUNT. */
  files(namespace: string): Promise<NamespaceFileEntry[]>;
  /** The content of one of them. */
  get(namespace: string, path: string): Promise<Buffer>;
}

export function scopedNamespaceFiles(storage: InternalStorage, from: string, grants: NamespaceGrants, limits: Limits = limitsFromEnv(process.env)): NamespaceFilesView {
  const files = new NamespaceFiles(storage, limits);
  const check = (namespace: string): void => {
    const denied = namespaceDenied(from, namespace, 'The namespace files', grants);
    if (denied) throw new StorageAccessError(denied);
  };
  return {
    files: async (namespace) => { check(namespace); return files.files(namespace); },
    get: async (namespace, path) => { check(namespace); return files.get(namespace, path); },
  };
}
