// WorkingDirectory in cluster mode: its child tasks run in different Pods, so the shared directory travels through
// internal storage. Before a child runs, the runner restores the directory's last snapshot; after it ran, it saves a
// new one (children of a WorkingDirectory run one after the other, so snapshots never race). A snapshot exists once the
// directory was seeded (controller/working-directory.ts: namespace files, input files), even when it holds no file:
// restoring it recreates the directory, so the next child does not seed it again, and a file a child deleted stays so.
import { access, mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, join, relative, resolve } from 'node:path';
import { sharedWorkingDirOf } from '../operator/controller/working-directory.js';
import { dict, parseJsonSafe } from '../operator/core/keyed.js';
import type { Execution, Flow, TaskRun } from '../operator/core/types.js';
import { executionStoragePath } from '../operator/storage/paths.js';
import type { InternalStorage } from '../operator/store/types.js';

/** Largest directory carried between Pods (bytes). */
export const MAX_SNAPSHOT_BYTES = 64 * 1024 * 1024;

export interface SharedDir { dir: string; storagePath: string; uri: string }

/** The shared directory of the nearest WorkingDirectory ancestor of `run`, or undefined. */
export function sharedDirOf(flow: Flow, exec: Execution, run: TaskRun, workRoot: string): SharedDir | undefined {
  const shared = sharedWorkingDirOf(flow, exec, run, workRoot);
  if (!shared) return undefined;
  const storagePath = `${executionStoragePath(exec)}/_workdirs/${shared.run.id}.json`;
  return { dir: shared.dir, storagePath, uri: `kestra:///${storagePath}` };
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
  await mkdir(root, { recursive: true }); // seeded: the child does not seed it again
  for (const [rel, data] of Object.entries(snapshot.files)) {
    const target = resolve(root, rel);
    if (!target.startsWith(`${root}/`)) continue; // never outside the directory
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, Buffer.from(data, 'base64'));
  }
}

/** Saves the directory as it is now; nothing when it was never made (its seeding failed: the next attempt seeds). */
export async function saveSharedDir(storage: InternalStorage, shared: SharedDir): Promise<void> {
  if (!(await access(shared.dir).then(() => true, () => false))) return;
  const files = dict<string>(); // file names are the tasks' (a file may be called `__proto__`)
  let total = 0;
  for (const file of await walk(shared.dir)) {
    total += (await stat(file)).size;
    if (total > MAX_SNAPSHOT_BYTES) throw new Error(`WorkingDirectory ${shared.dir} holds more than ${MAX_SNAPSHOT_BYTES} bytes: too large to share between task Pods`);
    files[relative(shared.dir, file)] = (await readFile(file)).toString('base64');
  }
  await storage.put(shared.storagePath, Buffer.from(JSON.stringify({ files })));
}
