// The execution store's layout on a real SQLite file: a body plus one row per task run, updates that write only the
// runs that changed (bytes written per update do not grow with the record), frozen written runs, another writer's
// versions never mistaken for ours, and migration 7 splitting bodies of the old layout (one JSON body per execution).
import Database from 'better-sqlite3';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Execution, TaskRun } from '../../core/types.js';
import { ConflictError } from '../types.js';
import { openDatabase } from './db.js';
import { type EmbeddedStores, openEmbeddedStores } from './index.js';
import { MIGRATIONS } from './schema.js';
import { sampleExecution, tempDir } from './test-fixtures.js';

let tmp: ReturnType<typeof tempDir>;
let stores: EmbeddedStores;

beforeEach(() => { tmp = tempDir(); stores = openEmbeddedStores(tmp.dir); });
afterEach(async () => { await stores.close(); tmp.remove(); });

function run(i: number, state: TaskRun['state']['current'] = 'SUCCESS'): TaskRun {
  const date = '2026-01-01T00:00:00.000Z';
  return {
    id: `run${i}`, executionId: 'e1', namespace: 'company.team', flowId: 'hello', taskId: 'r', parentTaskRunId: 'loop',
    value: String(i), iteration: i, state: { current: state, histories: [{ state, date }], startDate: date },
    attempts: [{ state: { current: state, histories: [{ state, date }], startDate: date } }], outputs: { value: `out ${i}` },
  };
}

/** One step of a sequential loop as the engine makes it: the running child ends (a new object), the next one starts. */
function nextStep(exec: Execution): Execution {
  const runs = exec.taskRunList.slice();
  const last = runs.length - 1;
  runs[last] = run(last);
  runs.push(run(runs.length, 'RUNNING'));
  return { ...exec, taskRunList: runs };
}

/** Bytes and run rows written by one update of a loop record that already holds `n` runs. */
async function costOfOneStepAt(n: number, id: string): Promise<{ bytes: number; rows: number }> {
  const runs = Array.from({ length: n }, (_, i) => run(i, i === n - 1 ? 'RUNNING' : 'SUCCESS'));
  let { execution, resourceVersion } = await stores.executions.create({ ...sampleExecution(id, { state: 'RUNNING' }), taskRunList: runs });
  ({ execution, resourceVersion } = await stores.executions.update(nextStep(execution), resourceVersion));
  const before = { ...stores.executions.writeStats };
  await stores.executions.update(nextStep(execution), resourceVersion);
  return { bytes: stores.executions.writeStats.bytes - before.bytes, rows: stores.executions.writeStats.runRows - before.runRows };
}

describe('the runs last written, kept for the next update (maxWrittenRuns: EXECUTION_CACHE_MAX_TASK_RUNS)', () => {
  it('are let go least recently written first once their runs pass the bound: that execution\'s next update writes every run, the others only what changed', async () => {
    await stores.close();
    stores = openEmbeddedStores(tmp.dir, { maxWrittenRuns: 1_000 });
    const records: Record<string, { execution: Execution; resourceVersion: number }> = {};
    for (const id of ['a', 'b', 'c']) {
      records[id] = await stores.executions.create({
        ...sampleExecution(id, { state: 'RUNNING' }), taskRunList: Array.from({ length: 400 }, (_, i) => run(i, i === 399 ? 'RUNNING' : 'SUCCESS')),
      });
    }
    // 1,200 runs written, 1,000 kept: 'a' (the least recent) was let go, 'b' and 'c' are kept.
    const rowsOfNextStep = async (id: string) => {
      const before = stores.executions.writeStats.runRows;
      const { execution, resourceVersion } = records[id]!;
      records[id] = await stores.executions.update(nextStep(execution), resourceVersion);
      return stores.executions.writeStats.runRows - before;
    };
    expect(await rowsOfNextStep('c')).toBe(2);
    expect(await rowsOfNextStep('b')).toBe(2);
    expect(await rowsOfNextStep('a')).toBe(401); // every run: nothing to compare with
    // 'a' is now the most recent: 'c' went to keep the bound.
    expect(await rowsOfNextStep('a')).toBe(2);
    expect(await rowsOfNextStep('c')).toBe(402);
    const stored = (await stores.executions.get('a'))!.execution;
    expect(stored.taskRunList).toHaveLength(402);
    expect(stored.taskRunList.filter((r) => r.state.current === 'RUNNING')).toHaveLength(1);
  });

  it('keeps the one just written whatever its size', async () => {
    await stores.close();
    stores = openEmbeddedStores(tmp.dir, { maxWrittenRuns: 1_000 });
    const { execution, resourceVersion } = await stores.executions.create({
      ...sampleExecution('big', { state: 'RUNNING' }), taskRunList: Array.from({ length: 1_500 }, (_, i) => run(i, i === 1_499 ? 'RUNNING' : 'SUCCESS')),
    });
    const before = stores.executions.writeStats.runRows;
    await stores.executions.update(nextStep(execution), resourceVersion);
    expect(stores.executions.writeStats.runRows - before).toBe(2);
  });
});

describe('task runs in rows of their own', () => {
  it('an update writes the runs that changed only: the same bytes for a record of 10 runs and of 5,000', async () => {
    const small = await costOfOneStepAt(10, 'small');
    const large = await costOfOneStepAt(5_000, 'large');
    expect(small.rows).toBe(2);
    expect(large.rows).toBe(2);
    // Ids and values are a few characters longer in the large record; nothing grows with the number of runs.
    expect(large.bytes).toBeLessThan(small.bytes + 100);
    const stored = (await stores.executions.get('large'))!.execution;
    expect(stored.taskRunList).toHaveLength(5_002);
    expect(stored.taskRunList.map((r) => r.state.current).filter((s) => s === 'RUNNING')).toEqual(['RUNNING']);
    expect(stored.taskRunList[5_000]).toEqual(run(5_000));
  });

  it('serialises the runs of a large update over several turns of the event loop, and writes them all', async () => {
    const n = 9_000;
    const { execution, resourceVersion } = await stores.executions.create({
      ...sampleExecution('wide', { state: 'RUNNING' }), taskRunList: Array.from({ length: n }, (_, i) => run(i, 'RUNNING')),
    });
    // Every run changes (a fan-out's results): 9,000 runs to serialise, at most 2,000 per turn.
    const ended = { ...execution, taskRunList: execution.taskRunList.map((r) => run(Number(r.value))) };
    let turns = 0;
    let done = false;
    const tick = () => { if (!done) { turns++; setImmediate(tick); } };
    setImmediate(tick);
    const before = stores.executions.writeStats.runRows;
    await stores.executions.update(ended, resourceVersion);
    done = true;
    expect(stores.executions.writeStats.runRows - before).toBe(n);
    // 5 slices (4 yields), then the group commit's own turn: other work ran in between.
    expect(turns).toBeGreaterThanOrEqual(5);
    const stored = (await stores.executions.get('wide'))!.execution;
    expect(stored.taskRunList.every((r) => r.state.current === 'SUCCESS')).toBe(true);
    expect(stored.taskRunList[n - 1]).toEqual(run(n - 1));
    expect(Object.isFrozen(ended.taskRunList[0])).toBe(true);
  });

  it('reads back exactly what was written, runs in order, and drops rows past a shorter list', async () => {
    const runs = [run(0), run(1), run(2, 'RUNNING')];
    const { execution } = await stores.executions.create({ ...sampleExecution('e1', { state: 'RUNNING' }), taskRunList: runs });
    expect((await stores.executions.get('e1'))!.execution).toEqual(execution);
    const shorter = { ...execution, taskRunList: [execution.taskRunList[0]!, run(2)] };
    await stores.executions.update(shorter, 1);
    expect((await stores.executions.get('e1'))!.execution).toEqual(shorter);
    expect((await stores.executions.search({})).results[0]).toEqual(shorter);
    expect((await stores.executions.listActive())[0]!.execution).toEqual(shorter);
  });

  it('a written run is frozen: changing it in place fails instead of being silently left unwritten', async () => {
    const { execution } = await stores.executions.create({ ...sampleExecution('e1', { state: 'RUNNING' }), taskRunList: [run(0, 'RUNNING')] });
    expect(() => { execution.taskRunList[0]!.state.current = 'SUCCESS'; }).toThrow(TypeError);
    expect(() => { execution.taskRunList[0]!.attempts.push({ state: run(1).state }); }).toThrow(TypeError);
  });

  it("another writer's version is never compared with ours: after it, every run is written again", async () => {
    const other = openEmbeddedStores(tmp.dir);
    try {
      const created = await stores.executions.create({ ...sampleExecution('e1', { state: 'RUNNING' }), taskRunList: [run(0, 'RUNNING'), run(1, 'RUNNING')] });
      // The other writer ends run 1 (version 2); our update from version 1 conflicts, ours from its version 2 writes all.
      const theirs = (await other.executions.get('e1'))!;
      await other.executions.update({ ...theirs.execution, taskRunList: [theirs.execution.taskRunList[0]!, run(1)] }, theirs.resourceVersion);
      await expect(stores.executions.update(nextStep(created.execution), 1)).rejects.toBeInstanceOf(ConflictError);
      const fresh = (await stores.executions.get('e1'))!;
      expect(fresh.execution.taskRunList[1]!.state.current).toBe('SUCCESS');
      const rows = stores.executions.writeStats.runRows;
      await stores.executions.update({ ...fresh.execution, taskRunList: [run(0), ...fresh.execution.taskRunList.slice(1)] }, fresh.resourceVersion);
      expect(stores.executions.writeStats.runRows - rows).toBe(2);
      expect((await other.executions.get('e1'))!.execution.taskRunList.map((r) => r.state.current)).toEqual(['SUCCESS', 'SUCCESS']);
    } finally {
      await other.close();
    }
  });
});

describe('task-run rows under group commit', () => {
  // The runs an update is compared with are those of the last COMMITTED write: a write that failed (its savepoint rolled
  // back alone, or its whole group) must not be remembered, or an object of it met again would be taken as stored.
  for (const failure of ['stale', 'locked'] as const) {
    it(`after a write that failed (${failure === 'stale' ? 'a stale version, rolled back alone' : 'a locked database, the whole group'}), the next update writes every run`, async () => {
      await stores.close();
      stores = openEmbeddedStores(tmp.dir, { busyTimeoutMs: 10 });
      const other = openEmbeddedStores(tmp.dir);
      try {
        const created = await stores.executions.create({ ...sampleExecution('e1', { state: 'RUNNING' }), taskRunList: [run(0, 'RUNNING'), run(1, 'RUNNING')] });
        await stores.executions.create(sampleExecution('e2', { state: 'RUNNING' }));
        const theirs = async () => {
          const s = (await other.executions.get('e1'))!;
          await other.executions.update({ ...s.execution, taskRunList: [s.execution.taskRunList[0]!, { ...run(1), outputs: { value: 'theirs' } }] }, s.resourceVersion);
        };
        const ours: TaskRun = { ...run(1), outputs: { value: 'ours' } };
        const e2 = (await stores.executions.get('e2'))!;
        let lock: ReturnType<typeof openDatabase> | undefined;
        if (failure === 'stale') await theirs(); // e1 is at version 2 now: ours from version 1 fails
        else { lock = openDatabase(path.join(tmp.dir, 'store.db')); lock.exec('BEGIN IMMEDIATE'); }
        const group = await Promise.allSettled([
          stores.executions.update({ ...created.execution, taskRunList: [created.execution.taskRunList[0]!, ours] }, 1),
          stores.executions.update({ ...e2.execution, labels: [{ key: 'k', value: 'v' }] }, e2.resourceVersion),
        ]);
        expect(group.map((r) => r.status)).toEqual(failure === 'stale' ? ['rejected', 'fulfilled'] : ['rejected', 'rejected']);
        if (lock) { lock.exec('ROLLBACK'); lock.close(); await theirs(); }
        // The caller meets its object again with the version another writer made: it must be written, not skipped.
        const fresh = (await stores.executions.get('e1'))!;
        expect(fresh).toMatchObject({ resourceVersion: 2, execution: { taskRunList: [{}, { outputs: { value: 'theirs' } }] } });
        await stores.executions.update({ ...fresh.execution, taskRunList: [fresh.execution.taskRunList[0]!, ours] }, 2);
        expect((await other.executions.get('e1'))!.execution.taskRunList[1]!.outputs).toEqual({ value: 'ours' });
      } finally {
        await other.close();
      }
    });
  }
});

describe('migration 7 (one JSON body per execution → body plus run rows)', () => {
  it('splits the bodies of a store file of the old layout; a body that does not parse stays as it was', async () => {
    const file = path.join(tmp.dir, 'old.db');
    const old = new Database(file);
    old.exec('CREATE TABLE schema_version (version INTEGER NOT NULL)');
    for (let v = 0; v < 6; v++) { old.exec(MIGRATIONS[v]!); old.prepare('INSERT INTO schema_version (version) VALUES (?)').run(v + 1); }
    const records: Execution[] = [
      { ...sampleExecution('with-runs', { state: 'RUNNING' }), taskRunList: [run(0), run(1, 'RUNNING')], parent: { executionId: 'p1', taskRunId: 't', namespace: 'n', flowId: 'f' } },
      { ...sampleExecution('no-runs', { state: 'SUCCESS' }), taskRunList: [] },
    ];
    const insert = old.prepare(`INSERT INTO executions (id, namespace, flow_id, state, start_date, labels, resource_version)
      VALUES (?, ?, ?, ?, ?, '[]', 3) RETURNING seq`);
    for (const e of records) {
      const { seq } = insert.get(e.id, e.namespace, e.flowId, e.state.current, e.state.startDate) as { seq: number };
      old.prepare('INSERT INTO execution_bodies (seq, body) VALUES (?, ?)').run(seq, JSON.stringify(e));
    }
    const { seq } = insert.get('broken', 'company.team', 'hello', 'RUNNING', new Date().toISOString()) as { seq: number };
    old.prepare('INSERT INTO execution_bodies (seq, body) VALUES (?, ?)').run(seq, '{"id": "broken", truncated');
    old.close();

    const db = openDatabase(file);
    try {
      const { SqliteExecutionStore } = await import('./executions.js');
      const store = new SqliteExecutionStore(db);
      expect((await store.get('with-runs'))).toEqual({ execution: records[0], resourceVersion: 3 });
      expect((await store.get('no-runs'))?.execution).toEqual(records[1]);
      expect((db.prepare("SELECT body FROM execution_bodies b JOIN executions e USING (seq) WHERE e.id = 'with-runs'").pluck().get() as string))
        .not.toContain('taskRunList');
      expect(db.prepare('SELECT count(*) FROM execution_task_runs').pluck().get()).toBe(2);
      expect((await store.listActive()).map((s) => s.execution.id)).toEqual(['with-runs']);
      await store.delete('broken'); // (a filter reading the body fails on a body that does not parse, as before)
      expect((await store.search({ filters: [{ kind: 'text', field: 'triggerExecutionId', op: 'EQUALS', values: ['p1'] }] })).results.map((e) => e.id)).toEqual(['with-runs']);
      const next = nextStep(records[0]!);
      await store.update(next, 3);
      expect((await store.get('with-runs'))?.execution).toEqual(next);
    } finally {
      db.close();
    }
  });
});
