// Test support: the real embedded server as a separate process (`operator/main.ts` through tsx) on a random port,
// for crash tests and benchmarks that must not share the client's event loop.
import { spawn, type ChildProcess } from 'node:child_process';
import { resolve } from 'node:path';

const ROOT = resolve(new URL('../..', import.meta.url).pathname);

export interface ServerProcess {
  proc: ChildProcess;
  base: string;
  port: number;
  /** Everything the server wrote so far (stdout, and stderr unless inherited). */
  output(): string;
}

/**
 * Starts the server on DATA_DIR `dataDir` and resolves once it listens; `base` ends in `/api/v1`. `env` adds to or
 * overrides the defaults (127.0.0.1, a free port, no sample flow); `nodeArgs` go to node before the script (e.g.
 * `--cpu-prof`, which NODE_OPTIONS does not allow); it rejects with the output when the server exits.
 */
export function startServerProcess(dataDir: string, stderr: 'pipe' | 'inherit' = 'pipe', env: NodeJS.ProcessEnv = {}, nodeArgs: string[] = []): Promise<ServerProcess> {
  return new Promise((res, rej) => {
    const proc = spawn(process.execPath, [...nodeArgs, '--import', 'tsx', 'operator/main.ts'], {
      cwd: ROOT, env: { ...process.env, PORT: '0', HOST: '127.0.0.1', DATA_DIR: dataDir, SAMPLE_FLOW: 'false', ...env },
      stdio: ['ignore', 'pipe', stderr],
    });
    let out = '';
    const timer = setTimeout(() => rej(new Error(`server did not start: ${out}`)), 30_000);
    proc.stdout!.on('data', (d) => {
      out += d;
      const m = /listening on http:\/\/[^:]+:(\d+)/.exec(out);
      if (m) { clearTimeout(timer); res({ proc, base: `http://127.0.0.1:${m[1]}/api/v1`, port: Number(m[1]), output: () => out }); }
    });
    proc.stderr?.on('data', (d) => { out += d; });
    proc.once('exit', (code) => { clearTimeout(timer); rej(new Error(`server exited ${code}: ${out}`)); });
  });
}
