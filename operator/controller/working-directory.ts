// A WorkingDirectory's shared directory, in both homes: which one a child task run works in (its nearest
// WorkingDirectory ancestor), and its seeding, once, before the first child runs: the namespace files its
// `namespaceFiles` selects, then its `inputFiles` (those of the same name win), as Kestra's preExecuteTasks does.
// Seeding goes through the child's run context, so the namespace files and `kestra:///` inputs are read through the
// execution's views (operator/tenancy): another namespace's files only when ALLOWED_NAMESPACES grants them.
import { randomBytes } from 'node:crypto';
import { access, mkdir, rename, rm } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { FLOWABLE } from '../core/flow-index.js';
import { snapshotIndex } from '../core/run-index.js';
import { taskForRun } from '../core/runs.js';
import type { Execution, Flow, Task, TaskRun } from '../core/types.js';
import type { RunContext } from '../plugins/types.js';
import { renderInputFiles, writeInputFiles } from '../plugins/scripts/files.js';
import { loadNamespaceFiles } from '../plugins/scripts/namespace-files.js';

export interface SharedWorkingDir {
  /** `<workRoot>/<executionId>/<WorkingDirectory task run id>`. */
  dir: string;
  /** The WorkingDirectory task (its `namespaceFiles` and `inputFiles`). */
  task: Task;
  /** Its task run. */
  run: TaskRun;
}

/** The shared directory of the nearest WorkingDirectory ancestor of `run`, or undefined when there is none. */
export function sharedWorkingDirOf(flow: Flow, exec: Execution, run: TaskRun, workRoot: string): SharedWorkingDir | undefined {
  const { byId } = snapshotIndex(exec);
  for (let p = run.parentTaskRunId ? byId.get(run.parentTaskRunId) : undefined; p; p = p.parentTaskRunId ? byId.get(p.parentTaskRunId) : undefined) {
    const task = taskForRun(flow, exec, p);
    if (task.type === FLOWABLE.WorkingDirectory) return { dir: join(workRoot, exec.id, p.id), task, run: p };
  }
  return undefined;
}

const exists = (path: string): Promise<boolean> => access(path).then(() => true, () => false);

/**
 * Seeds the shared directory unless it exists (seeded by an earlier child, or restored from the last child's snapshot
 * in a task Pod). The files are written to a fresh folder beside it, renamed into place when complete: a failed
 * seeding (a namespace refused, a missing input) leaves nothing behind, so the next attempt seeds again, and of two
 * children seeding at once only one directory wins. Returns whether it seeded.
 */
export async function seedSharedWorkingDir(ctx: RunContext, shared: SharedWorkingDir): Promise<boolean> {
  if (await exists(shared.dir)) return false;
  await mkdir(dirname(shared.dir), { recursive: true });
  const staging = `${shared.dir}.seeding-${randomBytes(6).toString('hex')}`;
  await mkdir(staging);
  try {
    await loadNamespaceFiles(ctx, staging, shared.task.namespaceFiles);
    await writeInputFiles(ctx, staging, renderInputFiles(ctx, shared.task.inputFiles));
    await rename(staging, shared.dir);
    return true;
  } catch (err) {
    await rm(staging, { recursive: true, force: true });
    const code = (err as NodeJS.ErrnoException).code;
    if ((code === 'ENOTEMPTY' || code === 'EEXIST') && await exists(shared.dir)) return false; // another child won
    throw err;
  }
}
