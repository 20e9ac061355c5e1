// Runs one local child process in its own process group, streams its stdout/stderr line by line, and kills
// the whole group on abort (SIGTERM, then SIGKILL after a grace period).
import { spawn } from 'node:child_process';
import { StringDecoder } from 'node:string_decoder';
import type { Readable } from 'node:stream';

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

/** Spawns the command and resolves once it has exited and its output has been read. */
export function runProcess(spec: ProcessSpec): Promise<ProcessOutcome> {
  return new Promise((resolve, reject) => {
    const [file, ...args] = spec.command;
    if (!file) return reject(new Error('Empty command'));
    const child = spawn(file, args, { cwd: spec.cwd, env: spec.env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    if (child.pid !== undefined) spec.onStart?.(child.pid);
    let killed = false;
    let killTimer: NodeJS.Timeout | undefined;
    const onAbort = (): void => {
      if (child.pid === undefined || child.exitCode !== null) return;
      killed = true;
      killGroup(child.pid, 'SIGTERM');
      killTimer = setTimeout(() => child.pid && killGroup(child.pid, 'SIGKILL'), spec.killGraceMs ?? 2000);
      killTimer.unref();
    };
    const streams = Promise.all([forEachLine(child.stdout, spec.onStdout), forEachLine(child.stderr, spec.onStderr)]);
    child.on('error', (err) => {
      spec.signal.removeEventListener('abort', onAbort);
      reject(new Error(`Unable to start '${file}': ${err.message}`));
    });
    child.on('exit', (code, sig) => {
      spec.signal.removeEventListener('abort', onAbort);
      // When killed, the SIGKILL timer stays armed for descendants that outlive the group leader.
      // Background children may keep the pipes open: stop waiting for them after a short while.
      const exitCode = code ?? (sig ? 128 + signalNumber(sig) : 1);
      const done = (): void => resolve({ exitCode, killed, pid: child.pid });
      const guard = setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
      }, 1000);
      void streams.then(() => {
        clearTimeout(guard);
        done();
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
