// Test support: processes as Linux's /proc shows them (the product's own reader, operator/plugins/scripts/proc.ts):
// whether one still runs (a zombie counts as gone: an orphan stays one until PID 1 reaps it, and some PID 1s never
// do), the tree under a pid, and a cleanup that kills what a failed test left behind.
import { readFileSync } from 'node:fs';
import { listProcesses, readStat } from '../../operator/plugins/scripts/proc.js';

export function isAlive(pid: number): boolean {
  const stat = readStat(pid);
  return stat !== undefined && stat.state !== 'Z';
}

/** Every live process below `root` (children, grandchildren...). */
export function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const p of listProcesses()) if (p.state !== 'Z') children.set(p.ppid, [...(children.get(p.ppid) ?? []), p.pid]);
  const out: number[] = [];
  const queue = [root];
  while (queue.length > 0) {
    for (const child of children.get(queue.shift()!) ?? []) { out.push(child); queue.push(child); }
  }
  return out;
}

/** The command line of a live process (for messages). */
export function commandOf(pid: number): string {
  try { return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim(); } catch { return '(gone)'; }
}

/** SIGKILL for each pid still alive (test cleanup). */
export function killAll(pids: number[]): void {
  for (const pid of pids) {
    try { if (isAlive(pid)) process.kill(pid, 'SIGKILL'); } catch { /* gone meanwhile */ }
  }
}
