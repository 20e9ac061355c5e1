// What Linux's /proc says about processes: a process's start time (field 22 of /proc/<pid>/stat) and the boot id,
// which with the pid identify a process beyond its (recyclable) pid, plus the process table for finding what is left
// of a task's process group. Everything answers "unknown" (undefined, empty) where /proc does not exist.
import { readdirSync, readFileSync } from 'node:fs';

export interface ProcStat {
  pid: number;
  /** One letter: R running, S sleeping, D uninterruptible, Z zombie (dead, not yet reaped)... */
  state: string;
  /** Parent process id. */
  ppid: number;
  /** Process group id. */
  pgrp: number;
  /** Clock ticks from boot to the process's start. */
  startTime: number;
}

/** The marker variable each task process inherits: a descendant that left the group still carries it. */
export const MARKER_ENV = 'FLOWPILOT_TASK_PROCESS';

function readText(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return undefined;
  }
}

/** Parses /proc/<pid>/stat; the command name (field 2, in parentheses) may hold spaces and parentheses. */
export function parseStat(pid: number, text: string): ProcStat | undefined {
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const ppid = Number(fields[1]);
  const pgrp = Number(fields[2]);
  const startTime = Number(fields[19]);
  if (!fields[0] || !Number.isSafeInteger(ppid) || !Number.isSafeInteger(pgrp) || !Number.isSafeInteger(startTime)) return undefined;
  return { pid, state: fields[0], ppid, pgrp, startTime };
}

export function readStat(pid: number): ProcStat | undefined {
  const text = readText(`/proc/${pid}/stat`);
  return text === undefined ? undefined : parseStat(pid, text);
}

let boot: string | undefined;
/** This boot's id (constant until the machine restarts). */
export function bootId(): string | undefined {
  boot ??= readText('/proc/sys/kernel/random/boot_id')?.trim() || undefined;
  return boot;
}

let identifiable: boolean | undefined;
/** True where the start time of a process can be read (Linux). */
export function canIdentify(): boolean {
  identifiable ??= bootId() !== undefined && readStat(process.pid) !== undefined;
  return identifiable;
}

/** Every process visible in /proc (those that end while it is read are left out). */
export function listProcesses(): ProcStat[] {
  let names: string[];
  try {
    names = readdirSync('/proc');
  } catch {
    return [];
  }
  return names.flatMap((n) => {
    if (!/^\d+$/.test(n)) return [];
    const s = readStat(Number(n));
    return s ? [s] : [];
  });
}

/** Whether the process started with `FLOWPILOT_TASK_PROCESS=<id>` in its environment (false when unreadable). */
export function carriesMarker(pid: number, id: string): boolean {
  const env = readText(`/proc/${pid}/environ`);
  return env !== undefined && `\0${env}`.includes(`\0${MARKER_ENV}=${id}\0`);
}

/** Whether any live (not zombie) process belongs to process group `pgid`. */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return false;
  }
  // Signals reach zombies too: an orphan stays one until PID 1 reaps it, so ask /proc when it is there.
  if (!canIdentify()) return true;
  return listProcesses().some((p) => p.pgrp === pgid && p.state !== 'Z');
}
