// git.Clone against real git servers on loopback (`git daemon`, git's smart HTTP backend with basic auth) and the
// file protocol: the clone in a WorkingDirectory seen by the next task, credentials kept out of .git/config and logs,
// transports that run commands (`ext::`) or read the server's disk (local paths) refused.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { makeBareRepo, startGitDaemon, startGitHttp } from '../../../test/support/git-servers.js';
import { startEmbedded, type Embedded } from '../../../test/support/embedded.js';
import type { Service } from '../../../test/support/services.js';
import { startSshd, type Sshd } from '../../../test/support/sshd.js';
import { getRunnable } from '../index.js';
import { makeTestContext, type TestContext } from '../testing.js';
import { gitProtocol, withoutPassword } from './clone.js';

const TYPE = 'ai.service.plugin.git.Clone';
const PASSWORD = 'pa55-w0rd-for-git';
let root: string;
let bare: string;
let daemon: Service;
let http: Service & { requests: string[] };
let t: TestContext | undefined;
const savedEnv = { ...process.env };

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'git-repos-'));
  bare = makeBareRepo(root, 'repo', { 'hello.txt': 'hello main\n' }, { 'dev.txt': 'on dev\n' });
  daemon = await startGitDaemon(root);
  http = await startGitHttp(root, 'alice', PASSWORD);
});
afterAll(async () => {
  await daemon?.stop();
  await http?.stop();
  rmSync(root, { recursive: true, force: true });
});
afterEach(async () => {
  await t?.cleanup();
  t = undefined;
  process.env = { ...savedEnv };
});

async function clone(task: Record<string, unknown>) {
  t = makeTestContext({ task: { id: 'clone', type: TYPE, ...task } });
  const r = await getRunnable(TYPE)!.run(t.ctx);
  return r;
}

describe('gitProtocol', () => {
  it.each([
    ['https://example.com/a.git', 'https'], ['git://h/a', 'git'], ['ssh://git@h/a', 'ssh'], ['git+ssh://h/a', 'ssh'],
    ['git@github.com:org/repo.git', 'ssh'], ['ext::sh -c touch% /tmp/x', 'ext'], ['fd::17', 'fd'], ['file:///srv/repo', 'file'],
    ['/srv/repo.git', 'file'], ['./repo', 'file'], ['../a:b', 'file'],
  ])('%s uses %s', (url, protocol) => expect(gitProtocol(url)).toBe(protocol));

  it('takes the password out of a URL', () => {
    expect(withoutPassword('https://bob:s%40cret@h/r.git')).toEqual({ url: 'https://bob@h/r.git', password: 's@cret' });
    expect(withoutPassword('https://bob@h/r.git')).toEqual({ url: 'https://bob@h/r.git' });
  });
});

describe('git.Clone', () => {
  it('clones a branch over git:// (git daemon), shallow', async () => {
    const r = await clone({ url: `${daemon.url}/repo.git`, branch: 'dev', directory: 'src' });
    expect(r.state).toBe('SUCCESS');
    const dir = r.outputs!.directory as string;
    expect(dir).toBe(join(t!.ctx.workingDir, 'src'));
    expect(readFileSync(join(dir, 'dev.txt'), 'utf8')).toBe('on dev\n');
    expect(execFileSync('git', ['rev-list', '--count', 'HEAD'], { cwd: dir, encoding: 'utf8' }).trim()).toBe('1');
  });

  it('checks out a tag and a commit', async () => {
    const first = execFileSync('git', ['rev-parse', 'v1'], { cwd: bare, encoding: 'utf8' }).trim();
    const r = await clone({ url: `${daemon.url}/repo.git`, commit: first, directory: 'c' });
    expect(r.state).toBe('SUCCESS');
    const dir = r.outputs!.directory as string;
    expect(execFileSync('git', ['rev-parse', 'HEAD'], { cwd: dir, encoding: 'utf8' }).trim()).toBe(first);
    await t!.cleanup(); t = undefined;
    const tagged = await clone({ url: `${daemon.url}/repo.git`, tag: 'v1' });
    expect(tagged.state).toBe('SUCCESS');
    expect(existsSync(join(tagged.outputs!.directory as string, 'dev.txt'))).toBe(false);
  });

  it('clones over HTTP with username/password: the password is masked and stays out of .git/config', async () => {
    const r = await clone({ url: `${http.url}/repo.git`, username: 'alice', password: PASSWORD });
    expect(r.state).toBe('SUCCESS');
    expect(http.requests.some((l) => l.endsWith(' auth'))).toBe(true);
    const config = readFileSync(join(r.outputs!.directory as string, '.git', 'config'), 'utf8');
    expect(config).toContain(`url = ${http.url}/repo.git`);
    expect(config).not.toContain(PASSWORD);
    expect(JSON.stringify(t!.logs)).not.toContain(PASSWORD);
    expect(readFileSync(join(r.outputs!.directory as string, 'hello.txt'), 'utf8')).toBe('hello main\n');
  });

  it('removes a password written in the URL from .git/config and masks it', async () => {
    const r = await clone({ url: `http://alice:${PASSWORD}@127.0.0.1:${http.port}/repo.git` });
    expect(r.state).toBe('SUCCESS');
    const config = readFileSync(join(r.outputs!.directory as string, '.git', 'config'), 'utf8');
    expect(config).toContain(`url = http://alice@127.0.0.1:${http.port}/repo.git`);
    expect(config).not.toContain(PASSWORD);
    expect(JSON.stringify(t!.logs)).not.toContain(PASSWORD);
  });

  it('fails at once with a wrong password (no prompt), naming the failure', async () => {
    const r = await clone({ url: `${http.url}/repo.git`, username: 'alice', password: 'wrong-password' });
    expect(r.state).toBe('FAILED');
    expect(r.error).toMatch(/git clone failed .*Authentication failed/);
  });

  it('refuses ext:: (a transport that runs a command): nothing runs', async () => {
    const marker = join(root, 'pwned');
    const r = await clone({ url: `ext::sh -c touch% ${marker}` });
    expect(r.state).toBe('FAILED');
    expect(r.error).toMatch(/'ext' transport .* not allowed .*GIT_ALLOWED_PROTOCOLS/);
    expect(existsSync(marker)).toBe(false);
  });

  it('git itself refuses a transport GIT_ALLOWED_PROTOCOLS leaves out, even in a submodule', async () => {
    // The repository's submodule points at a local path; with `file` not allowed, git refuses to fetch it.
    const sub = makeBareRepo(root, 'withsub', { 'a.txt': 'a\n' });
    const work = mkdtempSync(join(tmpdir(), 'git-sub-'));
    const env = { ...process.env, GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@e', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@e' };
    execFileSync('git', ['clone', '-q', sub, work], { env });
    execFileSync('git', ['-c', 'protocol.file.allow=always', 'submodule', 'add', '-q', bare, 'inner'], { cwd: work, env });
    execFileSync('git', ['commit', '-qm', 'sub'], { cwd: work, env });
    execFileSync('git', ['push', '-q', 'origin', 'HEAD:main'], { cwd: work, env });
    rmSync(work, { recursive: true, force: true });
    const r = await clone({ url: `${daemon.url}/withsub.git`, cloneSubmodules: true });
    expect(r.state).toBe('FAILED');
    expect(r.error).toMatch(/transport 'file' not allowed/);
  });

  it('refuses a local path or file:// unless GIT_ALLOWED_PROTOCOLS lists file, then clones it', async () => {
    for (const url of [bare, `file://${bare}`]) {
      const r = await clone({ url });
      expect(r.state).toBe('FAILED');
      expect(r.error).toMatch(/'file' transport .*GIT_ALLOWED_PROTOCOLS/);
      await t!.cleanup(); t = undefined;
    }
    process.env.GIT_ALLOWED_PROTOCOLS = 'file';
    const r = await clone({ url: `file://${bare}`, directory: 'local' });
    expect(r.state).toBe('SUCCESS');
    expect(readFileSync(join(r.outputs!.directory as string, 'hello.txt'), 'utf8')).toBe('hello main\n');
  });

  it('stops git when the task is killed (a server that never answers)', async () => {
    const silent = createServer(() => { /* accepts, never answers */ });
    await new Promise<void>((r) => silent.listen(0, '127.0.0.1', r));
    try {
      t = makeTestContext({ task: { id: 'clone', type: TYPE, url: `git://127.0.0.1:${(silent.address() as { port: number }).port}/repo.git` } });
      const running = getRunnable(TYPE)!.run(t.ctx);
      setTimeout(() => t!.controller.abort(), 300);
      const r = await running;
      expect(r).toEqual({ state: 'FAILED', error: 'Task killed' });
    } finally {
      silent.close();
    }
  });

  it('refuses a directory outside the working directory', async () => {
    const r = await clone({ url: `${daemon.url}/repo.git`, directory: '../elsewhere' });
    expect(r.state).toBe('FAILED');
    expect(r.error).toMatch(/Property 'directory' must be a path inside the working directory/);
  });
});

describe('git.Clone over SSH (Debian OpenSSH server)', () => {
  let sshd: Sshd;
  beforeAll(async () => { sshd = await startSshd(); });
  afterAll(async () => { await sshd?.stop(); });

  it.each([['a plain key', false], ['a passphrase-protected key', true]])('clones with %s, the key masked and not left on disk', async (_what, withPassphrase) => {
    const homes = (): string[] => readdirSync(tmpdir()).filter((n) => n.startsWith('git-clone-'));
    const before = new Set(homes());
    const r = await clone({
      url: `ssh://${sshd.user}@127.0.0.1:${sshd.port}${bare}`, directory: 'ssh',
      privateKey: withPassphrase ? sshd.protectedKey : sshd.key, ...(withPassphrase ? { passphrase: sshd.passphrase } : {}),
    });
    expect(r.error).toBeUndefined();
    expect(readFileSync(join(r.outputs!.directory as string, 'hello.txt'), 'utf8')).toBe('hello main\n');
    const keyLine = (withPassphrase ? sshd.protectedKey : sshd.key).split('\n')[3]!; // a line of the private part
    expect(keyLine.length).toBeGreaterThan(40);
    expect(JSON.stringify(t!.logs)).not.toContain(keyLine);
    expect(spawnSync('grep', ['-rlF', '--', keyLine, t!.ctx.workingDir], { encoding: 'utf8' }).status).toBe(1); // no match
    expect(homes().filter((n) => !before.has(n))).toEqual([]); // the key file's folder is gone
  });

  it('fails without a key (no prompt)', async () => {
    const r = await clone({ url: `ssh://${sshd.user}@127.0.0.1:${sshd.port}${bare}` });
    expect(r.state).toBe('FAILED');
    expect(r.error).toMatch(/Permission denied/);
  });
});

describe('git.Clone in a flow', () => {
  let e: Embedded;
  beforeAll(async () => {
    e = await startEmbedded({ PATH: process.env.PATH, SECRET_GIT_PASSWORD: Buffer.from(PASSWORD).toString('base64') });
  });
  afterAll(async () => { await e?.close(); });

  it('clones into a WorkingDirectory (seeded with an input file) where the next task reads the clone', async () => {
    const { execution: done, runs } = await e.runFlow(`id: clone_wd
namespace: gitfs.test
tasks:
  - id: wd
    type: io.kestra.plugin.core.flow.WorkingDirectory
    inputFiles:
      seed.txt: seeded
    tasks:
      - id: clone
        type: io.kestra.plugin.git.Clone
        url: ${http.url}/repo.git
        branch: dev
        username: alice
        password: "{{ secret('GIT_PASSWORD') }}"
      - id: read
        type: io.kestra.plugin.scripts.shell.Commands
        commands:
          - echo "::{\\"outputs\\":{\\"dev\\":\\"$(cat dev.txt)\\",\\"seed\\":\\"$(cat seed.txt)\\",\\"config\\":\\"$(grep -c ${PASSWORD} .git/config)\\"}}::"
`);
    expect(done.state.current).toBe('SUCCESS');
    expect(runs.read.outputs.vars).toEqual({ dev: 'on dev', seed: 'seeded', config: '0' });
    await e.stores.logs.flush();
    const logs = await e.json(`/logs/${done.id}`);
    expect(JSON.stringify(logs.body)).toContain('Cloning');
    expect(JSON.stringify(logs.body)).not.toContain(PASSWORD);
  });
});
