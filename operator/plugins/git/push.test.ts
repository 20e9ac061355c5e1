// git.Push against real git servers on loopback (`git daemon` with receive-pack, git's smart HTTP backend with basic
// auth): a new branch from `url` with inputFiles, nothing to commit, and Clone → script → Push in a WorkingDirectory.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type Embedded } from '../../../test/support/embedded.js';
import { makeBareRepo, startGitDaemon, startGitHttp } from '../../../test/support/git-servers.js';
import type { Service } from '../../../test/support/services.js';
import { getRunnable } from '../index.js';
import { makeTestContext, type TestContext } from '../testing.js';

const TYPE = 'ai.service.plugin.git.Push';
const PASSWORD = 'push-pa55word-xyz';
let root: string;
let bare: string;
let daemon: Service;
let http: Service;
let t: TestContext | undefined;

beforeAll(async () => {
  root = mkdtempSync(join(tmpdir(), 'git-push-'));
  bare = makeBareRepo(root, 'repo', { 'hello.txt': 'hello main\n' });
  daemon = await startGitDaemon(root);
  http = await startGitHttp(root, 'alice', PASSWORD);
});
afterAll(async () => {
  await daemon?.stop();
  await http?.stop();
  rmSync(root, { recursive: true, force: true });
});
afterEach(async () => { await t?.cleanup(); t = undefined; });

const show = (ref: string): string => execFileSync('git', ['show', '-s', '--format=%an <%ae> %s', ref], { cwd: bare, encoding: 'utf8' }).trim();
const cat = (ref: string, path: string): string => execFileSync('git', ['show', `${ref}:${path}`], { cwd: bare, encoding: 'utf8' });

describe('git.Push', () => {
  it('clones url, creates a missing branch, commits inputFiles (inline and kestra:///) and pushes', async () => {
    t = makeTestContext({ task: { id: 'push', type: TYPE } });
    const uri = await t.ctx.storage.put(`${t.ctx.storagePrefix}/report.csv`, Buffer.from('a,b\n'));
    Object.assign(t.ctx.task, {
      url: `${daemon.url}/repo.git`, branch: 'feature', commitMessage: 'add {{ flow.id }} files', directory: 'repo',
      inputFiles: { 'out/note.txt': 'note', 'out/report.csv': uri }, author: { name: 'Bot', email: 'bot@example.com' },
    });
    const r = await getRunnable(TYPE)!.run(t.ctx);
    expect(r.error).toBeUndefined();
    const head = execFileSync('git', ['rev-parse', 'feature'], { cwd: bare, encoding: 'utf8' }).trim();
    expect(r.outputs).toEqual({ commitId: head });
    expect(show('feature')).toBe('Bot <bot@example.com> add flow1 files');
    expect(cat('feature', 'out/note.txt')).toBe('note');
    expect(cat('feature', 'out/report.csv')).toBe('a,b\n');
    expect(cat('feature', 'hello.txt')).toBe('hello main\n'); // the clone's files are kept
    expect(execFileSync('git', ['rev-parse', 'main~0'], { cwd: bare, encoding: 'utf8' }).trim()).not.toBe(head);
    await t.cleanup(); t = undefined;

    // Pushing the same files again to the (now existing) branch: nothing to commit, nothing pushed.
    t = makeTestContext({ task: { id: 'push', type: TYPE, url: `${daemon.url}/repo.git`, branch: 'feature', commitMessage: 'again', inputFiles: { 'out/note.txt': 'note' } } });
    const again = await getRunnable(TYPE)!.run(t.ctx);
    expect(again.state).toBe('SUCCESS');
    expect(again.outputs).toEqual({});
    expect(execFileSync('git', ['rev-parse', 'feature'], { cwd: bare, encoding: 'utf8' }).trim()).toBe(head);
  });

  it('refuses a working directory without a clone when url is unset, and ext:: urls', async () => {
    t = makeTestContext({ task: { id: 'push', type: TYPE, branch: 'x', commitMessage: 'm' } });
    const r = await getRunnable(TYPE)!.run(t.ctx);
    expect(r.state).toBe('FAILED');
    expect(r.error).toContain("holds no clone: set 'url'");
    await t.cleanup(); t = undefined;
    t = makeTestContext({ task: { id: 'push', type: TYPE, url: 'ext::sh -c id', branch: 'x', commitMessage: 'm' } });
    const ext = await getRunnable(TYPE)!.run(t.ctx);
    expect(ext.error).toMatch(/'ext' transport .*GIT_ALLOWED_PROTOCOLS/);
  });
});

describe('git.Push in a flow', () => {
  let e: Embedded;
  beforeAll(async () => {
    e = await startEmbedded({ PATH: process.env.PATH, SECRET_GIT_PASSWORD: Buffer.from(PASSWORD).toString('base64') });
  });
  afterAll(async () => { await e?.close(); });

  it('Clone (HTTP, credentials) → a script writes a file → Push to a new branch, in one WorkingDirectory', async () => {
    const { execution: done, runs } = await e.runFlow(`id: clone_push
namespace: gitfs.test
pluginDefaults:
  - type: io.kestra.plugin.git
    values:
      username: alice
      password: "{{ secret('GIT_PASSWORD') }}"
tasks:
  - id: wd
    type: io.kestra.plugin.core.flow.WorkingDirectory
    tasks:
      - id: clone
        type: io.kestra.plugin.git.Clone
        url: ${http.url}/repo.git
      - id: generate
        type: io.kestra.plugin.scripts.shell.Commands
        commands:
          - echo generated > generated.txt
      - id: push
        type: io.kestra.plugin.git.Push
        branch: from-flow
        commitMessage: generated by {{ execution.id }}
`);
    expect(done.state.current, JSON.stringify(runs.push?.outputs)).toBe('SUCCESS');
    expect(runs.push.outputs.commitId).toBe(execFileSync('git', ['rev-parse', 'from-flow'], { cwd: bare, encoding: 'utf8' }).trim());
    expect(show('from-flow')).toBe(`alice <flowpilot@localhost> generated by ${done.id}`);
    expect(cat('from-flow', 'generated.txt')).toBe('generated\n');
    await e.stores.logs.flush();
    expect(JSON.stringify((await e.json(`/logs/${done.id}`)).body)).not.toContain(PASSWORD);
  });
});
