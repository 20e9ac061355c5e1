// The internal storage a task attempt sees: reads limited to the files its execution may read (files.ts), writes and
// deletes limited to its own execution's folder (folders: listed and deleted there only, that folder included). Plugins get this view, never the whole storage, so no property a flow
// author writes (inputFiles URIs, request bodies, upload sources, ForEachItem items) can reach another tenant's files.
import { executionStoragePath, storageSegments, type ExecutionRef } from '../storage/paths.js';
import type { InternalStorage } from '../store/types.js';
import { fileReadDenied, type FileCaller } from './files.js';
import type { NamespaceGrants } from './namespaces.js';

/** A refusal of the storage view: permanent, and a 403 where an HTTP layer shows it. */
export class StorageAccessError extends Error {
  readonly status = 403;
  constructor(message: string) { super(message); this.name = 'StorageAccessError'; }
}

export function scopedStorage(storage: InternalStorage, caller: FileCaller & { own: ExecutionRef }, grants: NamespaceGrants): InternalStorage {
  const readable = (uri: string): string => {
    const denied = fileReadDenied(caller, uri, grants);
    if (denied) throw new StorageAccessError(denied);
    return uri;
  };
  const own = executionStoragePath(caller.own).split('/');
  const writable = (path: string): string => {
    let segments: string[];
    try { segments = storageSegments(path); } catch (err) { throw new StorageAccessError((err as Error).message); }
    if (segments.length <= own.length || !own.every((s, i) => segments[i] === s)) {
      throw new StorageAccessError(`Writing '${path}' is not allowed: a task writes only inside its execution's folder (${own.join('/')}/)`);
    }
    return path;
  };
  /** Its own execution's folder, or a path inside it (folders a task may list and delete). */
  const ownFolder = (path: string): string => {
    let segments: string[];
    try { segments = storageSegments(path); } catch (err) { throw new StorageAccessError((err as Error).message); }
    if (segments.length < own.length || !own.every((s, i) => segments[i] === s)) {
      throw new StorageAccessError(`'${path}' is not allowed: a task lists and deletes folders only inside its execution's folder (${own.join('/')}/)`);
    }
    return path;
  };
  const view: InternalStorage = {
    put: async (path, data) => storage.put(writable(path), data),
    get: async (uri) => storage.get(readable(uri)),
    getSync: (uri) => storage.getSync(readable(uri)),
    statSync: (uri) => storage.statSync(readable(uri)),
    stream: async (uri) => storage.stream(readable(uri)),
    exists: async (uri) => storage.exists(readable(uri)),
    size: async (uri) => storage.size(readable(uri)),
    delete: async (uri) => storage.delete(writable(uri)),
    deleteTree: async (path) => storage.deleteTree(ownFolder(path)),
  };
  if (storage.localPath) view.localPath = (uri) => storage.localPath!(readable(uri));
  const tree = storage.tree;
  if (tree) {
    view.tree = {
      list: async (folder, max, tooMany) => tree.list(ownFolder(folder), max, tooMany),
      stat: async (path) => tree.stat(ownFolder(path)),
      mkdir: async (folder) => tree.mkdir(writable(folder)),
      deleteTree: async (folder) => tree.deleteTree(ownFolder(folder)),
    };
  }
  return view;
}
