// Test support: whether a process is still running (present and not a zombie: an orphan stays a zombie until PID 1
// reaps it, and some PID 1s never do), read from Linux's /proc.
import { readStat } from '../../operator/plugins/scripts/proc.js';

export function isLive(pid: number): boolean {
  const stat = readStat(pid);
  return stat !== undefined && stat.state !== 'Z';
}
