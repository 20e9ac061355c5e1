// Runs one local child process in its own process group, streams its stdout/stderr line by line, and ends the whole
// group with it: on abort (SIGTERM, then SIGKILL after a grace period) and when the leader exits (SIGKILL to what is
// left). With a registry (embedded mode) the group is recorded durably before it may run, and forgotten once gone.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { StringDecoder } from 'node:string_decoder';
import type { Readable, Writable } from 'node:stream';
import { setTimeout as delay } from 'node:timers/promises';
import { DEFAULT_LIMITS } from '../../core/limits.js';
import type { ProcessTracking } from '../types.js';
import { bootId, canIdentify, groupAlive, MARKER_ENV, readStat } from './proc.js';

export interface ProcessSpec {
  command: string[];
  cwd: string;
  env: Record<string, string>;
  signal: AbortSignal;
  onStdout(line: string): void;
  onStderr(line: string): void;
  /** Called once the process has been spawned. */
  onStart?(pid: number): void;
  /** Delay between SIGTERM and SIGKILL on abort (default 2000 ms). */
  killGraceMs?: number;
  /** Embedded mode: the registry the process group is recorded in while it lives (absent: not recorded). */
  track?: ProcessTracking;
  /** How long leftovers of the group may take to disappear after SIGKILL (default: TASK_KILL_WAIT_MS's default). */
  killWaitMs?: number;
}

export interface ProcessOutcome {
  exitCode: number;
  /** True when the process was stopped because the signal was aborted. */
  killed: boolean;
  pid?: number;
}

/** Calls `onLine` for every complete line of a stream, and for the last unterminated one at the end. */
function forEachLine(stream: Readable, onLine: (line: string) => void): Promise<void> {
  const decoder = new StringDecoder('utf8');
  let buffer = '';
  const flush = (final: boolean): void => {
    const parts = buffer.split('\n');
    buffer = final ? '' : (parts.pop() ?? '');
    const lines = final && parts[parts.length - 1] === '' ? parts.slice(0, -1) : parts;
    for (const l of lines) onLine(l.endsWith('\r') ? l.slice(0, -1) : l);
  };
  return new Promise((resolve) => {
    stream.on('data', (chunk: Buffer) => {
      buffer += decoder.write(chunk);
      flush(false);
    });
    const end = (): void => {
      buffer += decoder.end();
      if (buffer !== '') flush(true);
      resolve();
    };
    stream.on('end', end);
    stream.on('error', end);
    stream.on('close', end);
  });
}

function killGroup(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(-pid, signal);
  } catch {
    /* already gone */
  }
}

/**
 * A recorded process waits at this gate (one line on fd 3) until its record is written, then becomes the command
 * (exec: same pid, same start time). Should the server die before, the pipe closes and it exits without running.
 */
const GATE = 'read -r _ <&3 || exit 125; exec "$@" 3<&-';

function spawnGroup(spec: ProcessSpec, file: string, args: string[], gated: string | undefined): ChildProcess {
  if (gated === undefined) return spawn(file, args, { cwd: spec.cwd, env: spec.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  return spawn('/bin/sh', ['-c', GATE, 'flowpilot-task', file, ...args], {
    cwd: spec.cwd, env: { ...spec.env, [MARKER_ENV]: gated }, detached: true, stdio: ['ignore', 'pipe', 'pipe', 'pipe'],
  });
}

/** Records the (still waiting) group leader with what identifies it beyond its pid, then lets it run. */
function recordAndRelease(child: ChildProcess, track: ProcessTracking, id: string): void {
  const pid = child.pid!;
  const stat = readStat(pid);
  const boot = bootId();
  if (!stat || !boot) throw new Error(`process ${pid} is not in /proc`);
  track.registry.add({ id, ...track.owner, pid, startTime: stat.startTime, bootId: boot, created: new Date().toISOString() });
  const gate = child.stdio[3] as Writable;
  gate.on('error', () => { /* the process is gone already: its exit is reported as usual */ });
  gate.end('\n');
}

/** Waits until no process of the group is left, sending SIGKILL from `killAt` on; false if some outlive `waitMs` after it. */
async function endGroup(pgid: number, killAt: number, waitMs: number): Promise<boolean> {
  for (;;) {
    if (!groupAlive(pgid)) return true;
    const now = Date.now();
    if (now >= killAt) {
      killGroup(pgid, 'SIGKILL');
      if (now > killAt + waitMs) return false;
    }
    await delay(20);
  }
}

function forget(track: ProcessTracking, id: string): void {
  try {
    track.registry.remove(id);
  } catch {
    /* store closed (shutdown): the start-up sweep finds the group gone and drops the record */
  }
}

/** Spawns the command and resolves once it has exited, its group is gone and its output has been read. */
export function runProcess(spec: ProcessSpec): Promise<ProcessOutcome> {
  return new Promise((resolve, reject) => {
    const [file, ...args] = spec.command;
    if (!file) return reject(new Error('Empty command'));
    const id = spec.track && canIdentify() ? randomUUID() : undefined;
    const child = spawnGroup(spec, file, args, id);
    let failure: Error | undefined;
    let recorded = false;
    if (child.pid !== undefined && id !== undefined) {
      try {
        recordAndRelease(child, spec.track!, id);
        recorded = true;
      } catch (err) {
        failure = new Error(`Unable to record the task process before running it: ${(err as Error).message}`);
        killGroup(child.pid, 'SIGKILL');
      }
    }
    if (child.pid !== undefined && !failure) spec.onStart?.(child.pid);
    let killed = false;
    let killAt = 0;
    let killTimer: NodeJS.Timeout | undefined;
    const grace = spec.killGraceMs ?? 2000;
    const onAbort = (): void => {
      if (child.pid === undefined || child.exitCode !== null) return;
      killed = true;
      killAt = Date.now() + grace;
      killGroup(child.pid, 'SIGTERM');
      killTimer = setTimeout(() => child.pid && killGroup(child.pid, 'SIGKILL'), grace);
      killTimer.unref();
    };
    const streams = Promise.all([forEachLine(child.stdout!, spec.onStdout), forEachLine(child.stderr!, spec.onStderr)]);
    child.on('error', (err) => {
      spec.signal.removeEventListener('abort', onAbort);
      reject(new Error(`Unable to start '${file}': ${err.message}`));
    });
    child.on('exit', (code, sig) => {
      spec.signal.removeEventListener('abort', onAbort);
      const exitCode = code ?? (sig ? 128 + signalNumber(sig) : 1);
      // The attempt is over: what is left of its group goes too, now or (killed) when the SIGTERM grace ends.
      const gone = endGroup(child.pid!, killed ? killAt : Date.now(), spec.killWaitMs ?? DEFAULT_LIMITS.taskKillWaitMs).then((ok) => {
        if (!ok) return; // still there: the record stays for the start-up sweep
        clearTimeout(killTimer);
        if (recorded) forget(spec.track!, id!);
      });
      // Descendants that left the group may keep the pipes open: stop waiting for them after a short while.
      const guard = setTimeout(() => {
        child.stdout!.destroy();
        child.stderr!.destroy();
      }, 1000);
      void Promise.all([streams.then(() => clearTimeout(guard)), gone]).then(() => {
        if (failure) reject(failure);
        else resolve({ exitCode, killed, pid: child.pid });
      });
    });
    if (spec.signal.aborted) onAbort();
    else spec.signal.addEventListener('abort', onAbort, { once: true });
  });
}

const SIGNALS: Record<string, number> = { SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGKILL: 9, SIGTERM: 15 };
function signalNumber(sig: NodeJS.Signals): number {
  return SIGNALS[sig] ?? 1;
}
