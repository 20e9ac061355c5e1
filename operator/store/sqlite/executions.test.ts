// Executions on a real SQLite file: CRUD, optimistic concurrency, commands acknowledged atomically, search, watch.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConflictError, type PendingCommand, type WatchEvent, summaryOf } from '../types.js';
import { type EmbeddedStores, openEmbeddedStores } from './index.js';
import { sampleExecution, tempDir } from './test-fixtures.js';

let tmp: ReturnType<typeof tempDir>;
let stores: EmbeddedStores;

beforeEach(() => { tmp = tempDir(); stores = openEmbeddedStores(tmp.dir); });
afterEach(async () => { await stores.close(); tmp.remove(); });

describe('SqliteExecutionStore CRUD', () => {
  it('creates idempotently and reads back', async () => {
    const created = await stores.executions.create(sampleExecution('e1'));
    expect(created.resourceVersion).toBe(1);
    const again = await stores.executions.create({ ...sampleExecution('e1'), flowId: 'other' });
    expect(again.resourceVersion).toBe(1);
    expect(again.execution.flowId).toBe('hello');
    expect((await stores.executions.get('e1'))?.execution).toEqual(sampleExecution('e1', { startDate: created.execution.state.startDate }));
    expect(await stores.executions.get('missing')).toBeUndefined();
  });

  it('deletes an execution with its labels and pending commands', async () => {
    await stores.executions.create(sampleExecution('e1'));
    await stores.executions.addCommand('e1', { type: 'kill' });
    expect(await stores.executions.delete('e1')).toBe(true);
    expect(await stores.executions.get('e1')).toBeUndefined();
    expect(await stores.executions.pendingCommands('e1')).toEqual([]);
    expect((await stores.executions.search({})).total).toBe(0);
    expect(await stores.executions.delete('e1')).toBe(false);
  });

  it('updates with the expected resourceVersion and rejects a stale one', async () => {
    const { execution } = await stores.executions.create(sampleExecution('e1'));
    execution.state.current = 'RUNNING';
    const updated = await stores.executions.update(execution, 1);
    expect(updated.resourceVersion).toBe(2);
    await expect(stores.executions.update({ ...execution, error: 'stale' }, 1)).rejects.toBeInstanceOf(ConflictError);
    const stored = await stores.executions.get('e1');
    expect(stored).toMatchObject({ resourceVersion: 2, execution: { state: { current: 'RUNNING' } } });
    expect(stored?.execution.error).toBeUndefined();
    await expect(stores.executions.update(sampleExecution('nope'), 1)).rejects.toThrow(/not found/);
  });

  it('deletes acknowledged commands in the update transaction, and keeps them when the update conflicts', async () => {
    const { execution } = await stores.executions.create(sampleExecution('e1'));
    await stores.executions.create(sampleExecution('e2'));
    const kill = await stores.executions.addCommand('e1', { type: 'kill' });
    const resume = await stores.executions.addCommand('e1', { type: 'resume', inputs: { ok: true } });
    const other = await stores.executions.addCommand('e2', { type: 'restart' });
    expect(resume.seq).toBeGreaterThan(kill.seq);
    expect((await stores.executions.pendingCommands('e1')).map((c) => c.command)).toEqual([{ type: 'kill' }, { type: 'resume', inputs: { ok: true } }]);

    await expect(stores.executions.update(execution, 7, [kill.seq])).rejects.toBeInstanceOf(ConflictError);
    expect((await stores.executions.pendingCommands('e1')).length).toBe(2);

    // A seq of another execution is not consumed by this one.
    await stores.executions.update(execution, 1, [kill.seq, other.seq]);
    expect((await stores.executions.pendingCommands()).map((c) => c.seq)).toEqual([resume.seq, other.seq]);
  });

  it('lists active executions oldest first and counts by state', async () => {
    await stores.executions.create(sampleExecution('new', { state: 'RUNNING', startDate: '2026-01-02T00:00:00.000Z' }));
    await stores.executions.create(sampleExecution('old', { state: 'CREATED', startDate: '2026-01-01T00:00:00.000Z' }));
    await stores.executions.create(sampleExecution('done', { state: 'SUCCESS' }));
    await stores.executions.create(sampleExecution('paused', { state: 'PAUSED', startDate: '2026-01-03T00:00:00.000Z' }));
    expect((await stores.executions.listActive()).map((s) => s.execution.id)).toEqual(['old', 'new', 'paused']);
    // The summaries: the same executions in the same order, what resync and start decisions read of them.
    expect(await stores.executions.listActiveSummaries()).toEqual((await stores.executions.listActive()).map((s) => summaryOf(s.execution, s.resourceVersion)));
    expect(await stores.executions.count('company.team', 'hello', ['RUNNING', 'CREATED'])).toBe(2);
    expect(await stores.executions.count('company.team', 'hello', ['SUCCESS'])).toBe(1);
    expect(await stores.executions.count('company', 'hello', ['SUCCESS'])).toBe(0);
  });
});

describe('SqliteExecutionStore search', () => {
  beforeEach(async () => {
    const add = (id: string, day: number, opts: Parameters<typeof sampleExecution>[1]) =>
      stores.executions.create(sampleExecution(id, { ...opts, startDate: `2026-03-0${day}T10:00:00.000Z` }));
    await add('a', 1, { namespace: 'company', flowId: 'f1', state: 'SUCCESS', labels: [{ key: 'env', value: 'prod' }, { key: 'team', value: 'x' }] });
    await add('b', 2, { namespace: 'company.team', flowId: 'f1', state: 'FAILED', labels: [{ key: 'env', value: 'prod' }] });
    await add('c', 3, { namespace: 'company.team', flowId: 'f2', state: 'RUNNING', labels: [{ key: 'env', value: 'dev' }, { key: 'team', value: 'x' }] });
    await add('d', 4, { namespace: 'companyx', flowId: 'f1', state: 'SUCCESS' });
  });

  const ids = async (q: Parameters<EmbeddedStores['executions']['search']>[0]) =>
    (await stores.executions.search(q)).results.map((e) => e.id);

  it('filters by namespace prefix, flow and states, newest first', async () => {
    expect(await ids({})).toEqual(['d', 'c', 'b', 'a']);
    expect(await ids({ namespace: 'company' })).toEqual(['c', 'b', 'a']);
    expect(await ids({ namespace: 'company', flowId: 'f1' })).toEqual(['b', 'a']);
    expect(await ids({ state: ['SUCCESS', 'RUNNING'] })).toEqual(['d', 'c', 'a']);
  });

  it('requires every label to match', async () => {
    expect(await ids({ labels: { env: 'prod' } })).toEqual(['b', 'a']);
    expect(await ids({ labels: { env: 'prod', team: 'x' } })).toEqual(['a']);
    expect(await ids({ labels: { team: 'y' } })).toEqual([]);
  });

  it('follows label changes made by updates', async () => {
    const stored = (await stores.executions.get('c'))!;
    stored.execution.labels = [{ key: 'env', value: 'prod' }];
    await stores.executions.update(stored.execution, stored.resourceVersion);
    expect(await ids({ labels: { env: 'prod' } })).toEqual(['c', 'b', 'a']);
    expect(await ids({ labels: { team: 'x' } })).toEqual(['a']);
  });

  it('filters by start date range (inclusive, any ISO offset) and pages with a total', async () => {
    expect(await ids({ startDate: '2026-03-02T10:00:00Z', endDate: '2026-03-03T11:00:00+01:00' })).toEqual(['c', 'b']);
    const page = await stores.executions.search({ limit: 2, offset: 1 });
    expect(page.results.map((e) => e.id)).toEqual(['c', 'b']);
    expect(page.total).toBe(4);
  });
});

describe('SqliteExecutionStore feeds', () => {
  it('notifies watchers after commit with copies, in order, despite a failing listener', async () => {
    const events: WatchEvent[] = [];
    const commands: PendingCommand[] = [];
    stores.executions.watch(() => { throw new Error('listener bug (expected in this test)'); });
    const stop = stores.executions.watch((e) => events.push(e));
    stores.executions.onCommand((c) => commands.push(c));
    const original = console.error;
    console.error = () => {};
    try {
      const { execution } = await stores.executions.create(sampleExecution('e1'));
      await stores.executions.create(sampleExecution('e1'));
      execution.state.current = 'RUNNING';
      await stores.executions.update(execution, 1);
      await stores.executions.addCommand('e1', { type: 'kill' });
      stop();
      await stores.executions.update(execution, 2);
    } finally {
      console.error = original;
    }
    expect(events.map((e) => [e.type, e.resourceVersion, e.execution.state.current]))
      .toEqual([['ADDED', 1, 'CREATED'], ['MODIFIED', 2, 'RUNNING']]);
    expect(commands.map((c) => c.command.type)).toEqual(['kill']);
  });

  it('a listener that writes sees its own event after the current one reached every listener', async () => {
    const seen: string[] = [];
    let written: Promise<unknown> | undefined;
    stores.executions.watch((e) => {
      seen.push(`A:${e.type}:${e.resourceVersion}`);
      if (e.type === 'ADDED') written = stores.executions.update(e.execution, e.resourceVersion);
    });
    stores.executions.watch((e) => { seen.push(`B:${e.type}:${e.resourceVersion}`); });
    await stores.executions.create(sampleExecution('e1'));
    await written; // group-committed with the writes of the next turn
    expect(seen).toEqual(['A:ADDED:1', 'B:ADDED:1', 'A:MODIFIED:2', 'B:MODIFIED:2']);
  });
});

describe('SqliteExecutionStore getRunsJson', () => {
  it('gives the runs as the stored JSON joined by commas, in order; none for no run or no execution', async () => {
    const runs = [{ id: 'r1', value: 'é' }, { id: 'r2' }] as never[];
    await stores.executions.create({ ...sampleExecution('e1'), taskRunList: runs });
    await stores.executions.create(sampleExecution('e0'));
    const read = (await stores.executions.getRunsJson('e1'))!;
    expect(JSON.parse(`[${read.runs.toString('utf8')}]`)).toEqual(runs);
    expect(read.stored.execution.taskRunList).toEqual([]);
    expect((await stores.executions.getRunsJson('e0'))!.runs.length).toBe(0);
    expect(await stores.executions.getRunsJson('missing')).toBeUndefined();
  });

  it('(SQLite\'s 1e9-byte limit simulated: no test can store that much) runs too large to join: undefined, so readers use get', async () => {
    await stores.executions.create({ ...sampleExecution('e1'), taskRunList: [{ id: 'r1' }] as never[] });
    const stmts = (stores.executions as unknown as { stmts: { runsJson: { get: () => unknown } } }).stmts;
    stmts.runsJson.get = () => { throw Object.assign(new Error('string or blob too big'), { code: 'SQLITE_TOOBIG' }); };
    expect(await stores.executions.getRunsJson('e1')).toBeUndefined();
    expect((await stores.executions.get('e1'))!.execution.taskRunList).toEqual([{ id: 'r1' }]);
    stmts.runsJson.get = () => { throw Object.assign(new Error('disk I/O error'), { code: 'SQLITE_IOERR' }); };
    await expect(stores.executions.getRunsJson('e1')).rejects.toThrow('disk I/O error'); // any other error is the caller's
  });
});
