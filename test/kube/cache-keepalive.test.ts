// A process that only waits for a KubeCache's first list stays alive while the API server refuses the list (503, as
// when it restarts), and gets its answer once the server is back: the defect behind runners that exited 0 without
// running their task.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { tempDir } from '../../operator/store/sqlite/test-fixtures.js';
import { until } from '../support/wait.js';
import { startKubeTestServer, type KubeTestServer } from './test-server/index.js';

const ROOT = resolve(import.meta.dirname, '../..');
let srv: KubeTestServer | undefined;
const cleanups: (() => void)[] = [];
afterEach(async () => { for (const c of cleanups.splice(0)) c(); await srv?.close(); srv = undefined; });

function startChild(kubeconfig: string) {
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'test/kube/cache-wait.child.ts'), kubeconfig], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => { out += d; });
  child.stderr.on('data', (d) => { out += d; });
  cleanups.push(() => { if (child.exitCode === null) child.kill('SIGKILL'); });
  return { child, output: () => out, exit: new Promise<number | null>((r) => child.on('exit', (code) => r(code))) };
}

it('a process waiting for ready() outlives a KVPair list outage and syncs after it', { timeout: 120_000 }, async () => {
  srv = await startKubeTestServer();
  const tmp = tempDir('cache-keepalive-');
  cleanups.push(() => tmp.remove());
  const kubeconfig = join(tmp.dir, 'kubeconfig');
  writeFileSync(kubeconfig, srv.kubeConfig().exportConfig());
  srv.startOutage({ resources: ['kvpairs'] });
  const p = startChild(kubeconfig);
  let exited = false;
  void p.exit.then(() => { exited = true; });
  // Several refused lists: the cache's retry timer (unref'd) fired more than once while the process stayed up.
  await until(() => (p.output().match(/list failed: 503/g)?.length ?? 0) >= 3 || exited, () => `three refused lists (output: ${p.output()})`);
  expect(exited, p.output()).toBe(false);
  srv.endOutage();
  expect(await p.exit, p.output()).toBe(0);
  expect(p.output()).toContain('synced');
});
