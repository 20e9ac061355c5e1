// Tests of a script's `namespaceFiles` with real stores and /bin/sh: include/exclude globs as Kestra matches them,
// ifExists, folderPerNamespace, other namespaces only when ALLOWED_NAMESPACES grants them, and read() of a namespace file.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Task } from '../../core/types.js';
import { NamespaceFiles } from '../../storage/namespace-files.js';
import { namespaceGrantsFromEnv } from '../../tenancy/namespaces.js';
import { makeTestContext, type TestContext, type TestContextOptions } from '../testing.js';
import { loadNamespaceFiles } from './namespace-files.js';
import { shellCommandsPlugin } from './shell.js';

let t: TestContext | undefined;
afterEach(async () => { await t?.cleanup(); t = undefined; });

async function setup(namespaceFiles: unknown, extra: Partial<TestContextOptions> = {}, props: Partial<Task> = {}): Promise<TestContext> {
  t = makeTestContext({ task: { id: 'sh', type: shellCommandsPlugin.type, commands: ['true'], namespaceFiles, ...props }, ...extra });
  const files = new NamespaceFiles(t.stores.storage);
  const put = (ns: string, p: string, text: string) => files.write(ns, p.split('/'), Buffer.from(text));
  await put('company.team', 'main.py', 'print(1)');
  await put('company.team', 'lib/util.py', 'def f(): pass');
  await put('company.team', 'lib/notes.md', '# notes');
  await put('company.team', 'data/in.csv', 'a,b');
  await put('shared.ns', 'lib/shared.py', 'shared');
  await put('victim.ns', 'secret.txt', 'secret');
  return t;
}

const listed = (dir: string, names: string[]) => names.filter((n) => existsSync(join(dir, n)));

describe('namespaceFiles', () => {
  it.each([
    ['everything when enabled', { enabled: true }, ['main.py', 'lib/util.py', 'lib/notes.md', 'data/in.csv']],
    ['nothing when disabled', { enabled: false, include: ['**'] }, []],
    ['enabled by default (Kestra: include alone is enough)', { include: ['**/*.py'] }, ['main.py', 'lib/util.py']],
    ['nothing for `*.py`: paths are matched with their leading slash, as in Kestra', { include: ['*.py'] }, []],
    ['a folder glob matched at any depth', { include: ['lib/**'] }, ['lib/util.py', 'lib/notes.md']],
    ['an absolute glob from the root only', { include: ['/*.py'] }, ['main.py']],
    ['exclude after include', { include: ['**'], exclude: ['**.md', 'data/**'] }, ['main.py', 'lib/util.py']],
    ['a template list', { include: "{{ ['main.py'] }}" }, ['main.py']],
  ])('copies %s', async (_what, cfg, want) => {
    const c = await setup(cfg);
    await loadNamespaceFiles(c.ctx, c.ctx.workingDir);
    expect(listed(c.ctx.workingDir, ['main.py', 'lib/util.py', 'lib/notes.md', 'data/in.csv'])).toEqual(want);
  });

  it.each([
    ['OVERWRITE', 'print(1)', undefined],
    ['IGNORE', 'mine', undefined],
    ['WARN', 'mine', 'already exists'],
  ])('ifExists %s', async (ifExists, content, warning) => {
    const c = await setup({ include: ['main.py'], ifExists });
    (await import('node:fs')).writeFileSync(join(c.ctx.workingDir, 'main.py'), 'mine');
    await loadNamespaceFiles(c.ctx, c.ctx.workingDir);
    expect(readFileSync(join(c.ctx.workingDir, 'main.py'), 'utf8')).toBe(content);
    if (warning) expect(c.messages('WARN').join()).toContain(warning);
  });

  it('ifExists FAIL fails the task, naming the file', async () => {
    const c = await setup({ include: ['main.py'], ifExists: 'FAIL' });
    (await import('node:fs')).writeFileSync(join(c.ctx.workingDir, 'main.py'), 'mine');
    await expect(loadNamespaceFiles(c.ctx, c.ctx.workingDir)).rejects.toThrow(/main\.py.*already exists/);
  });

  it('puts each namespace in its own folder with folderPerNamespace, other namespaces when granted', async () => {
    const grants = namespaceGrantsFromEnv({ ALLOWED_NAMESPACES: '{"shared.ns": ["company.*"]}' });
    const c = await setup({ namespaces: ['company.team', 'shared.ns'], folderPerNamespace: true, include: ['lib/**'] }, { grants });
    await loadNamespaceFiles(c.ctx, c.ctx.workingDir);
    expect(readFileSync(join(c.ctx.workingDir, 'shared.ns/lib/shared.py'), 'utf8')).toBe('shared');
    expect(existsSync(join(c.ctx.workingDir, 'company.team/lib/util.py'))).toBe(true);
  });

  it("refuses another namespace's files without a grant", async () => {
    const c = await setup({ namespaces: ['victim.ns'] });
    await expect(loadNamespaceFiles(c.ctx, c.ctx.workingDir)).rejects.toThrow(/namespace 'victim\.ns' is not accessible from namespace 'company\.team'/);
    expect(existsSync(join(c.ctx.workingDir, 'secret.txt'))).toBe(false);
  });

  it('runs a script with its namespace files, inputFiles of the same name winning', async () => {
    const c = await setup({ include: ['main.py', 'lib/util.py'] }, {}, { commands: ['cat main.py', 'echo', 'cat lib/util.py'], inputFiles: { 'main.py': 'from inputFiles' } });
    const r = await shellCommandsPlugin.run(c.ctx);
    expect(r.state).toBe('SUCCESS');
    expect(c.messages('INFO')).toEqual(expect.arrayContaining(['from inputFiles', 'def f(): pass']));
  });
});

describe('read() of a namespace file', () => {
  it('reads its namespace by path (with or without a leading slash) or by URI, never out of it', async () => {
    const c = await setup(undefined);
    expect(c.ctx.render("{{ read('lib/util.py') }}|{{ read('/main.py') }}")).toBe('def f(): pass|print(1)');
    expect(c.ctx.render("{{ read('kestra:///company/team/_files/data/in.csv') }}")).toBe('a,b');
    expect(() => c.ctx.render("{{ read('../../victim/ns/_files/secret.txt') }}")).toThrow(/traversal/i);
    expect(() => c.ctx.render("{{ read('secret.txt', namespace='victim.ns') }}")).toThrow(/namespace file of namespace 'victim\.ns'/);
    expect(() => c.ctx.render("{{ read('kestra:///victim/ns/_files/secret.txt') }}")).toThrow(/not allowed/);
  });

  it("reads another namespace's file when ALLOWED_NAMESPACES grants it", async () => {
    const c = await setup(undefined, { grants: namespaceGrantsFromEnv({ ALLOWED_NAMESPACES: '{"shared.ns": ["company.*"]}' }) });
    expect(c.ctx.render("{{ read('lib/shared.py', 'shared.ns') }}")).toBe('shared');
  });
});
