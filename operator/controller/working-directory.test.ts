// A WorkingDirectory's namespaceFiles and inputFiles through runAttempt, with real SQLite stores, local storage and
// /bin/sh: the shared directory is seeded before the first child, once; another namespace's files are refused unless
// ALLOWED_NAMESPACES grants them, and a refused seeding leaves nothing behind (the next attempt seeds again).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { newExecution } from '../core/execution.js';
import type { TaskRun } from '../core/types.js';
import { parseFlow } from '../model/index.js';
import { NamespaceFiles } from '../storage/namespace-files.js';
import { openEmbeddedStores, type EmbeddedStores } from '../store/sqlite/index.js';
import { tempDir } from '../store/sqlite/test-fixtures.js';
import { namespaceGrantsFromEnv, type NamespaceGrants } from '../tenancy/namespaces.js';
import { runAttempt } from './attempt.js';
import { createSecretRenderer } from './secrets.js';

let stores: EmbeddedStores | undefined;
let tmp: ReturnType<typeof tempDir> | undefined;
afterEach(async () => { await stores?.close(); stores = undefined; tmp?.remove(); tmp = undefined; });

const run = (id: string, taskId: string, parent?: string): TaskRun => ({
  id, executionId: 'e1', namespace: 'company.team', flowId: 'f', taskId, ...(parent ? { parentTaskRunId: parent } : {}),
  state: { current: 'RUNNING', histories: [], startDate: new Date().toISOString() }, attempts: [],
});

/** Runs the WorkingDirectory's two children one after the other; returns their outcomes and the shared directory. */
async function runWorkingDirectory(wdProps: string, grants?: NamespaceGrants) {
  tmp = tempDir('wd-files-');
  stores = openEmbeddedStores(tmp.dir);
  const files = new NamespaceFiles(stores.storage);
  await files.write('company.team', ['main.sh'], Buffer.from('echo main'));
  await files.write('company.team', ['lib', 'util.sh'], Buffer.from('echo util'));
  await files.write('shared.ns', ['lib', 'shared.sh'], Buffer.from('echo shared'));
  await files.write('victim.ns', ['secret.txt'], Buffer.from('secret'));
  await stores.storage.put('victim/f/executions/v1/tasks/t/r/secret.txt', Buffer.from('secret'));
  const flow = { ...parseFlow(`id: f
namespace: company.team
tasks:
  - id: wd
    type: io.kestra.plugin.core.flow.WorkingDirectory
${wdProps}
    tasks:
      - id: one
        type: ai.service.plugin.scripts.shell.Commands
        commands: ['find . -type f | sort; rm -f main.sh']
      - id: two
        type: ai.service.plugin.scripts.shell.Commands
        commands: ['find . -type f | sort']
`), revision: 1 };
  const exec = { ...newExecution({ id: 'e1', flow, inputs: {}, now: new Date() }), taskRunList: [run('w1', 'wd'), run('c1', 'one', 'w1'), run('c2', 'two', 'w1')] };
  const workRoot = join(tmp.dir, 'work');
  const deps = { stores, renderer: createSecretRenderer(stores, {}), workRoot, ...(grants ? { grants } : {}) };
  const signal = new AbortController().signal;
  const one = await runAttempt(deps, flow, exec, exec.taskRunList[1]!, 1, signal);
  const two = await runAttempt(deps, flow, exec, exec.taskRunList[2]!, 1, signal);
  await stores.logs.flush();
  const logs = async (taskRunId: string) => (await stores!.logs.forExecution('e1', { taskRunId })).map((l) => l.message);
  return { one, two, dir: join(workRoot, 'e1', 'w1'), execDir: join(workRoot, 'e1'), logs };
}

describe('WorkingDirectory namespaceFiles', () => {
  it('seeds the shared directory once, before the first child: namespace files, then inputFiles over them', async () => {
    const r = await runWorkingDirectory(`    namespaceFiles: { enabled: true, exclude: ["lib/**"] }
    inputFiles: { main.sh: "echo from inputFiles", extra.txt: "{{ flow.id }}" }`);
    expect(r.one.state).toBe('SUCCESS');
    expect((await r.logs('c1')).some((m) => m.startsWith("Loaded 1 namespace files from 'company.team'"))).toBe(true);
    expect((await r.logs('c1')).filter((m) => m.startsWith('./'))).toEqual(['./extra.txt', './main.sh']);
    // `one` deleted main.sh: the directory is not seeded again for `two`.
    expect(r.two.state).toBe('SUCCESS');
    expect((await r.logs('c2')).filter((m) => m.startsWith('./'))).toEqual(['./extra.txt']);
    expect(readFileSync(join(r.dir, 'extra.txt'), 'utf8')).toBe('f');
    expect(readdirSync(r.execDir)).toEqual(['w1']); // no staging folder left
  });

  it("refuses another namespace's files, naming it and ALLOWED_NAMESPACES; nothing is left half-seeded", async () => {
    const r = await runWorkingDirectory('    namespaceFiles: { namespaces: [company.team, victim.ns] }');
    expect(r.one.state).toBe('FAILED');
    expect(r.one.error).toContain("'victim.ns'");
    expect(r.one.error).toContain('ALLOWED_NAMESPACES');
    expect(existsSync(r.dir)).toBe(false);
    // The next child (or attempt) tries again: refused again, never a directory seeded without the refused files' check.
    expect(r.two.state).toBe('FAILED');
    expect(existsSync(r.execDir) ? readdirSync(r.execDir) : []).toEqual([]);
  });

  it('reads a namespace ALLOWED_NAMESPACES grants, and still refuses the others', async () => {
    const grants = namespaceGrantsFromEnv({ ALLOWED_NAMESPACES: '{"shared.ns": ["company.*"]}' });
    const granted = await runWorkingDirectory('    namespaceFiles: { namespaces: [company.team, shared.ns], folderPerNamespace: true, include: ["lib/**"] }', grants);
    expect(granted.one.state, granted.one.error).toBe('SUCCESS');
    expect((await granted.logs('c1')).filter((m) => m.startsWith('./'))).toEqual(['./company.team/lib/util.sh', './shared.ns/lib/shared.sh']);
    await stores!.close(); stores = undefined; tmp!.remove(); tmp = undefined;
    const refused = await runWorkingDirectory('    namespaceFiles: { namespaces: [victim.ns] }', grants);
    expect(refused.one.state).toBe('FAILED');
    expect(refused.one.error).toContain("'victim.ns'");
  });

  it("refuses an inputFiles URI of another namespace's execution", async () => {
    const r = await runWorkingDirectory('    inputFiles: { stolen.txt: "kestra:///victim/f/executions/v1/tasks/t/r/secret.txt" }');
    expect(r.one.state).toBe('FAILED');
    expect(r.one.error).toContain('victim');
    expect(existsSync(r.dir)).toBe(false);
  });
});
