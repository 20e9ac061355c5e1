// Test support: runs the flowpilot CLI (bin/flowpilot.mjs) as a child process, the way a user or CI does, and
// collects its exit code and output. Asynchronous, so a server in the test's own process keeps answering.
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';

export const ROOT = resolve(new URL('../..', import.meta.url).pathname);
export const BIN = resolve(ROOT, 'bin/flowpilot.mjs');

export interface CliResult { code: number; stdout: string; stderr: string }

export interface CliRun { done: Promise<CliResult>; kill(): void; stderrSoFar(): string; stdoutSoFar(): string }

/** Starts `flowpilot ...args` (env added to the test's, FLOWPILOT_* cleared first). */
export function startCli(args: string[], env: NodeJS.ProcessEnv = {}, opts: { cwd?: string; input?: string; argv0?: string } = {}): CliRun {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('FLOWPILOT_')));
  const proc = spawn(process.execPath, [opts.argv0 ?? BIN, ...args], { cwd: opts.cwd ?? ROOT, env: { ...base, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (d) => { stdout += d; });
  proc.stderr.on('data', (d) => { stderr += d; });
  proc.stdin.end(opts.input ?? '');
  const done = new Promise<CliResult>((res, rej) => {
    proc.once('error', rej);
    proc.once('close', (code) => res({ code: code ?? -1, stdout, stderr }));
  });
  return { done, kill: () => proc.kill('SIGKILL'), stderrSoFar: () => stderr, stdoutSoFar: () => stdout };
}

export const cli = (args: string[], env: NodeJS.ProcessEnv = {}, opts: { cwd?: string; input?: string; argv0?: string } = {}): Promise<CliResult> =>
  startCli(args, env, opts).done;
