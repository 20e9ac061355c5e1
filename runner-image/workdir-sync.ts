// WorkingDirectory in cluster mode: its child tasks run in different Pods, so the shared directory travels through
// internal storage. Before a child runs, the runner restores the directory's last snapshot; after it ran, it saves a
// new one (children of a WorkingDirectory run one after the other, so snapshots never race).
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { FLOWABLE } from '../operator/core/flow-index.js';
import { dict, parseJsonSafe } from '../operator/core/keyed.js';
import { taskForRun } from '../operator/core/runs.js';
import type { Execution, Flow, TaskRun } from '../operator/core/types.js';
import { executionStoragePath } from '../operator/storage/paths.js';
import type { InternalStorage } from '../operator/store/types.js';

/** Largest directory carried between Pods (bytes). */
export const MAX_SNAPSHOT_BYTES = 64 * 1024 * 1024;

export interface SharedDir { dir: string; storagePath: string; uri: string }

/** The shared directory of the nearest WorkingDirectory ancestor of `run`, or undefined. */
export function sharedDirOf(flow: Flow, exec: Execution, run: TaskRun, workRoot: string): SharedDir | undefined {
  const byId = new Map(exec.taskRunList.map((r) => [r.id, r]));
  for (let p = run.parentTaskRunId ? byId.get(run.parentTaskRunId) : undefined; p; p = p.parentTaskRunId ? byId.get(p.parentTaskRunId) : undefined) {
    if (taskForRun(flow, exec, p).type !== FLOWABLE.WorkingDirectory) continue;
    const storagePath = `${executionStoragePath(exec)}/_workdirs/${p.id}.json`;
    return { dir: join(workRoot, exec.id, p.id), storagePath, uri: `kestra:///${storagePath}` };
  }
  return undefined;
}

async function walk(dir: string, out: string[] = []): Promise<string[]> {
  for (const entry of await readdir(dir, { withFileTypes: true }).catch(() => [])) {
    const p = join(dir, entry.name);
    if (entry.isDirectory()) await walk(p, out);
    else if (entry.isFile()) out.push(p);
  }
  return out;
}

export async function restoreSharedDir(storage: InternalStorage, shared: SharedDir): Promise<void> {
  if (!(await storage.exists(shared.uri))) return;
  const snapshot = parseJsonSafe((await storage.get(shared.uri)).toString('utf8')) as { files: Record<string, string> };
  const root = resolve(shared.dir);
  for (const [rel, data] of Object.entries(snapshot.files)) {
    const target = resolve(root, rel);
    if (!target.startsWith(`${root}/`)) continue; // never outside the directory
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, Buffer.from(data, 'base64'));
  }
}

export async function saveSharedDir(storage: InternalStorage, shared: SharedDir): Promise<void> {
  const files = dict<string>(); // file names are the tasks' (a file may be called `__proto__`)
  let total = 0;
  for (const file of await walk(shared.dir)) {
    total += (await stat(file)).size;
    if (total > MAX_SNAPSHOT_BYTES) throw new Error(`WorkingDirectory ${shared.dir} holds more than ${MAX_SNAPSHOT_BYTES} bytes: too large to share between task Pods`);
    files[relative(shared.dir, file)] = (await readFile(file)).toString('base64');
  }
  if (Object.keys(files).length) await storage.put(shared.storagePath, Buffer.from(JSON.stringify({ files })));
}
