// The controller under faults, on real SQLite stores: another connection holding the write lock (real SQLITE_BUSY)
// delays executions but loses none; a lost wake-up (a dropped result report, an execution written by another
// connection, which this process's watch never sees) is picked up by the resync; a permanent error (a flow revision
// deleted from the store, a record the engine throws on) fails that execution with the reason while others succeed.
// Also: the engine's kv()/read() never read synchronously, and its now() is the injected clock.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { newExecution } from '../core/execution.js';
import { newId } from '../core/ids.js';
import type { Execution, Flow } from '../core/types.js';
import { initExpressions } from '../expr/index.js';
import { parseFlow } from '../model/index.js';
import { openDatabase } from '../store/sqlite/db.js';
import { SqliteExecutionStore } from '../store/sqlite/executions.js';
import { openEmbeddedStores, type EmbeddedStores } from '../store/sqlite/index.js';
import { tempDir } from '../store/sqlite/test-fixtures.js';
import type { Stores } from '../store/types.js';
import { until } from '../../test/support/wait.js';
import { Controller, type ControllerOptions } from './controller.js';
import { LocalLauncher } from './launcher.js';
import { createSecretRenderer } from './secrets.js';

const P = 'ai.service.plugin.';
const ENDED = ['SUCCESS', 'WARNING', 'FAILED', 'KILLED'];
let stores: EmbeddedStores | undefined;
let controller: Controller | undefined;
let tmp: ReturnType<typeof tempDir> | undefined;
const closers: (() => void)[] = [];

afterEach(async () => {
  await controller?.stop();
  for (const c of closers.splice(0)) c();
  await stores?.close();
  tmp?.remove();
  controller = stores = tmp = undefined;
});

async function setup(sources: string[], busyTimeoutMs?: number): Promise<Flow[]> {
  await initExpressions();
  tmp = tempDir('controller-faults-');
  stores = openEmbeddedStores(tmp.dir, busyTimeoutMs === undefined ? {} : { busyTimeoutMs });
  const flows = [];
  for (const src of sources) flows.push((await stores.flows.save(parseFlow(src), src)).record.flow);
  return flows;
}

async function start(opts: ControllerOptions = {}, over: Stores = stores!): Promise<Controller> {
  controller = new Controller(over, { dataDir: tmp!.dir, env: { PATH: process.env.PATH }, ...opts });
  await controller.start();
  return controller;
}

async function create(flow: Flow, inputs: Record<string, unknown> = {}): Promise<Execution> {
  const exec = newExecution({ id: newId(), flow, inputs, now: new Date() });
  await stores!.executions.create(exec);
  return exec;
}

const ended = (id: string, ms = 60_000) => until(async () => {
  const e = (await stores!.executions.get(id))?.execution;
  return e && ENDED.includes(e.state.current) ? e : undefined;
}, `execution ${id} to end`, ms);

/** A second connection to the same database file: another process's view (no watch events reach the controller). */
function otherConnection() {
  const db = openDatabase(join(tmp!.dir, 'store.db'));
  closers.push(() => db.close());
  return db;
}

const RETURNS = (id: string, n: number) => `id: ${id}\nnamespace: faults\ntasks:\n${Array.from({ length: n }, (_, i) =>
  `  - id: t${i}\n    type: ${P}core.debug.Return\n    format: "${i}-{{ execution.id }}"\n`).join('')}`;

describe('controller faults', { timeout: 120_000 }, () => {
  it('a write lock held by another connection (real SQLITE_BUSY) delays executions but loses none', async () => {
    const [parent] = await setup([
      `id: parent\nnamespace: faults\ntasks:\n  - id: a\n    type: ${P}core.debug.Return\n    format: a\n  - id: call\n    type: ${P}core.flow.Subflow\n    namespace: faults\n    flowId: child\n    wait: true\n  - id: b\n    type: ${P}core.debug.Return\n    format: b\n`,
      RETURNS('child', 2),
    ], 20);
    await start();
    const execs = [];
    for (let i = 0; i < 12; i++) execs.push(await create(parent!));
    const lock = otherConnection();
    lock.exec('BEGIN IMMEDIATE');
    const released = new Promise<void>((r) => setTimeout(() => { lock.exec('COMMIT'); r(); }, 1500));
    await released;
    for (const e of execs) {
      const done = await ended(e.id);
      expect(done.state.current, JSON.stringify(done.taskRunList.map((r) => [r.taskId, r.state.current]))).toBe('SUCCESS');
      expect(done.taskRunList.map((r) => r.taskId).sort()).toEqual(['a', 'b', 'call']);
      expect(done.taskRunList.every((r) => r.attempts.length === 1)).toBe(true);
    }
    const children = await stores!.executions.search({ namespace: 'faults', flowId: 'child' });
    expect(children.total).toBe(12);
    expect(children.results.every((c) => c.state.current === 'SUCCESS')).toBe(true);
  });

  it('a dropped result report only delays: the resync asks again and the task is not run twice', async () => {
    await setup([]);
    const counter = join(tmp!.dir, 'runs.txt');
    const src = `id: once\nnamespace: faults\ntasks:\n  - id: count\n    type: ${P}scripts.shell.Commands\n    commands: ["echo run >> ${counter}"]\n  - id: after\n    type: ${P}core.debug.Return\n    format: done\n`;
    const flow = (await stores!.flows.save(parseFlow(src), src)).record.flow;
    let dropped = 0;
    const s = stores!;
    await start({
      resyncIntervalMs: 300,
      launcher: (report) => new LocalLauncher({
        stores: s, renderer: createSecretRenderer(s, { PATH: process.env.PATH }), workRoot: join(tmp!.dir, 'work'),
        // The first report is lost on the way (as when its event is dropped): nothing else will wake the execution.
        report: (...args) => { if (dropped++ === 0) return; report(...args); },
      }),
    });
    const exec = await create(flow);
    const done = await ended(exec.id);
    expect(done.state.current).toBe('SUCCESS');
    expect(dropped).toBeGreaterThan(1);
    expect(readFileSync(counter, 'utf8').trim().split('\n')).toEqual(['run']);
    expect((controller!.launcher as LocalLauncher).unrecorded).toBe(0);
  });

  it('an execution written by another connection (no watch event here) is started by the resync', async () => {
    const [flow] = await setup([RETURNS('elsewhere', 2)]);
    await start({ resyncIntervalMs: 300 });
    const other = new SqliteExecutionStore(otherConnection());
    const exec = newExecution({ id: newId(), flow: flow!, inputs: {}, now: new Date() });
    await other.create(exec);
    expect((await ended(exec.id)).state.current).toBe('SUCCESS');
  });

  it('a flow revision deleted from the store fails its execution with the reason; the others succeed', async () => {
    const [gone, fine] = await setup([RETURNS('gone', 1), RETURNS('fine', 2)]);
    otherConnection().prepare('DELETE FROM flows WHERE namespace = ? AND id = ?').run('faults', 'gone');
    await start();
    const bad = await create(gone!);
    const good = await Promise.all([1, 2, 3].map(() => create(fine!)));
    const failed = await ended(bad.id);
    expect(failed.state.current).toBe('FAILED');
    expect(failed.error).toBe('Flow faults.gone revision 1 not found');
    await stores!.logs.flush();
    expect((await stores!.logs.forExecution(bad.id)).map((l) => `${l.level} ${l.message}`)).toContain('ERROR Execution failed: Flow faults.gone revision 1 not found');
    for (const g of good) expect((await ended(g.id)).state.current).toBe('SUCCESS');
  });

  it('a record the engine throws on is failed at recovery with the reason; the others recover', async () => {
    const [flow] = await setup([RETURNS('poison', 2)]);
    const poisoned = newExecution({ id: newId(), flow: flow!, inputs: {}, now: new Date() });
    poisoned.state = { current: 'RUNNING', histories: [{ state: 'RUNNING', date: new Date().toISOString() }], startDate: new Date().toISOString() };
    const now = new Date().toISOString();
    poisoned.taskRunList = [{
      id: 'run-ghost', executionId: poisoned.id, namespace: 'faults', flowId: 'poison', taskId: 'ghost',
      state: { current: 'RUNNING', histories: [{ state: 'RUNNING', date: now }], startDate: now },
      attempts: [{ state: { current: 'RUNNING', histories: [{ state: 'RUNNING', date: now }], startDate: now } }],
    } as unknown as Execution['taskRunList'][number]];
    await stores!.executions.create(poisoned);
    const healthy = await create(flow!);
    await start();
    const failed = await ended(poisoned.id);
    expect(failed.state.current).toBe('FAILED');
    expect(failed.error).toBe("The engine failed on this execution: Task 'ghost' of task run 'run-ghost' is not in flow revision 1");
    expect(failed.taskRunList[0]!.state.current).toBe('FAILED');
    expect((await ended(healthy.id)).state.current).toBe('SUCCESS');
  });

  it('kv() and read() in flowable properties and flow outputs are fetched beforehand, never read synchronously; now() is the injected clock', async () => {
    await setup([]);
    const s = stores!;
    await s.kv.set({ namespace: 'faults', key: 'flag', value: 'yes' });
    const uri = await s.storage.put('faults/other/executions/e1/tasks/t/r/data.txt', Buffer.from('file-content')); // a file of the namespace (operator/tenancy)
    const src = `id: reads\nnamespace: faults\ntasks:
  - id: check
    type: ${P}core.flow.If
    condition: "{{ kv('flag') == 'yes' }}"
    then:
      - id: yes
        type: ${P}core.debug.Return
        format: then
    else:
      - id: no
        type: ${P}core.debug.Return
        format: else
  - id: sw
    type: ${P}core.flow.Switch
    value: "{{ read('${uri}') }}"
    cases:
      file-content:
        - id: matched
          type: ${P}core.debug.Return
          format: matched
outputs:
  - id: file
    type: STRING
    value: "{{ read('${uri}') }}"
  - id: missing
    type: STRING
    value: "{{ kv('nothing', errorOnMissing=false) ?? 'none' }}"
  - id: when
    type: STRING
    value: "{{ now() }}"
`;
    const flow = (await s.flows.save(parseFlow(src), src)).record.flow;
    const sync: string[] = [];
    // The stores as the engine sees them: asynchronous reads as they are, a synchronous read recorded and refused.
    const guard = <T extends { get(...a: never[]): unknown }>(store: T, what: string): T => Object.assign(Object.create(store) as T, {
      get: store.get.bind(store),
      getSync: (...args: unknown[]) => { sync.push(`${what}(${args.join(', ')})`); throw new Error(`${what} called`); },
    });
    const guarded: Stores = { ...s, kv: guard(s.kv, 'kv.getSync'), storage: guard(s.storage, 'storage.getSync') };
    const offset = Date.now() - Date.parse('2001-02-03T04:05:06Z');
    await start({ clock: () => new Date(Date.now() - offset) }, guarded);
    const exec = await create(flow);
    const done = await ended(exec.id);
    expect(sync).toEqual([]);
    expect(done.state.current, done.error).toBe('SUCCESS');
    expect(done.taskRunList.map((r) => r.taskId).sort()).toEqual(['check', 'matched', 'sw', 'yes']);
    expect(done.outputs).toMatchObject({ file: 'file-content', missing: 'none' });
    expect(String(done.outputs!.when)).toMatch(/^2001-02-03T/);
  });
});
