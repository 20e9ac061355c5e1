// Test support: the process tree under a pid, read from /proc (Linux), to check that a stopped service leaves nothing
// running behind it, and a cleanup that kills what is left.
import { readdirSync, readFileSync } from 'node:fs';

/** Parent pid and state of a live process, or undefined once it is gone (a zombie counts as gone: it has exited). */
function stat(pid: number): { ppid: number; state: string } | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name sits in parentheses and may itself hold spaces or parentheses.
    const [state, ppid] = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return state === 'Z' ? undefined : { ppid: Number(ppid), state: state! };
  } catch {
    return undefined;
  }
}

export const isAlive = (pid: number): boolean => stat(pid) !== undefined;

/** Every live process below `root` (children, grandchildren...). */
export function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    const s = stat(pid);
    if (s) children.set(s.ppid, [...(children.get(s.ppid) ?? []), pid]);
  }
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
