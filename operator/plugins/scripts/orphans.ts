// Start-up sweep of embedded mode: before the controller re-runs the attempts a crash interrupted, every recorded task
// process group the crash left alive is killed (SIGKILL, then waited for) and its record dropped, so that no task runs
// twice at the same time. A process counts as the task's only when nothing else can be mistaken for it:
//  - the members of its group while the recorded leader still holds its pid (same pid, start time and boot id; alive
//    or an unreaped zombie): a pid is not reused while it names a live process or group;
//  - any process that started after the leader and carries the record's FLOWPILOT_TASK_PROCESS marker in its
//    environment: descendants that left the group (setsid) or outlived its leader.
// Not recognized: a descendant that both lost the group (setsid, or a leader that died) and dropped the marker from
// its environment (env -i), and processes of another user (setuid programs): they may outlive the crash.
// Not used: `setpriv --pdeathsig KILL` (util-linux, on Debian). It reaches the direct child only, for a script the
// shell waiting on the real work; killing that shell at the crash would leave the work running without the leader
// whose pid and start time prove the whole group is the task's, recognizable by its marker alone.
import { setTimeout as delay } from 'node:timers/promises';
import { DEFAULT_LIMITS, limitError, type Limits } from '../../core/limits.js';
import type { ProcessRegistry, TaskProcess } from '../../store/types.js';
import { bootId, carriesMarker, listProcesses, type ProcStat } from './proc.js';

export interface SweepOptions {
  limits?: Limits;
  log?: (message: string) => void;
}

/** The live processes of a recorded task in a process table; `group`: the recorded leader still holds its pid. */
export function survivors(rec: TaskProcess, table: ProcStat[]): { group: boolean; pids: number[] } {
  const group = table.some((p) => p.pid === rec.pid && p.startTime === rec.startTime);
  const pids = table.filter((p) => p.state !== 'Z' && p.pid !== process.pid && p.startTime >= rec.startTime
    && ((group && p.pgrp === rec.pid) || carriesMarker(p.pid, rec.id))).map((p) => p.pid);
  return { group, pids };
}

function sigkill(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    /* gone meanwhile */
  }
}

const named = (rec: TaskProcess): string =>
  `task process group ${rec.pid} (execution ${rec.executionId}, task run ${rec.taskRunId}, attempt ${rec.attempt})`;

/** Kills what is left of one recorded task and waits until it is gone; returns the pids it killed. */
async function killRecorded(rec: TaskProcess, limits: Limits): Promise<number[]> {
  const killed = new Set<number>();
  const deadline = Date.now() + limits.taskKillWaitMs;
  for (;;) {
    const { group, pids } = survivors(rec, listProcesses());
    if (pids.length === 0) return [...killed];
    if (Date.now() > deadline) {
      throw limitError('taskKillWaitMs', `The ${named(rec)} left by a crash is still alive after SIGKILL (pids ${pids.join(', ')}); not starting beside it`, limits);
    }
    if (group) sigkill(-rec.pid);
    for (const pid of pids) { sigkill(pid); killed.add(pid); }
    await delay(25);
  }
}

/**
 * Kills every recorded task process still alive (same boot) and drops every record; run it before the controller
 * recovers anything. Throws (a LimitError naming TASK_KILL_WAIT_MS) when a killed process does not disappear in time.
 */
export async function killOrphanProcesses(registry: ProcessRegistry | undefined, opts: SweepOptions = {}): Promise<TaskProcess[]> {
  const limits = opts.limits ?? DEFAULT_LIMITS;
  const log = opts.log ?? ((m: string) => console.warn(`[processes] ${m}`));
  const swept: TaskProcess[] = [];
  for (const rec of registry?.list() ?? []) {
    const pids = rec.bootId === bootId() ? await killRecorded(rec, limits) : [];
    if (pids.length > 0) {
      swept.push(rec);
      log(`killed the ${named(rec)} left running by a crash: pids ${pids.join(', ')}`);
    }
    registry!.remove(rec.id);
  }
  return swept;
}
