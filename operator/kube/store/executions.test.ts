// Cluster execution store against the Kubernetes API test server (real HTTP, client-node informers): CRUD,
// conditional status writes, commands appended to spec and acknowledged in status, search, feeds across processes.
import { randomBytes } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { sampleExecution } from '../../store/sqlite/test-fixtures.js';
import { ConflictError, type PendingCommand, type WatchEvent, summaryOf } from '../../store/types.js';
import { LABELS, executionName } from '../names.js';
import { type StoreHarness, crd, startStoreHarness, until } from './test-support.js';

let h: StoreHarness;
beforeEach(async () => { h = await startStoreHarness(); });
afterEach(async () => { await h.close(); });

const raw = async (id: string): Promise<any> => h.co.getNamespacedCustomObject({ ...crd('executions'), name: executionName(id) });

describe('KubeExecutionStore CRUD', () => {
  it('creates an Execution resource idempotently and reads the record back', async () => {
    const ex = h.stores.executions;
    const created = await ex.create(sampleExecution('e1', { labels: [{ key: 'env', value: 'prod' }] }));
    expect(created.resourceVersion).toBeGreaterThan(0);
    const again = await ex.create({ ...sampleExecution('e1'), flowId: 'other' });
    expect(again.resourceVersion).toBe(created.resourceVersion);
    expect(again.execution.flowId).toBe('hello');
    expect((await ex.get('e1'))?.execution).toEqual(sampleExecution('e1', { startDate: created.execution.state.startDate, labels: [{ key: 'env', value: 'prod' }] }));
    expect(await ex.get('missing')).toBeUndefined();

    const obj = await raw('e1');
    expect(obj.metadata.labels[LABELS.executionId]).toBe('e1');
    expect(obj.metadata.labels[LABELS.flowId]).toBe('hello');
    expect(obj.spec).toMatchObject({ namespace: 'company.team', flowId: 'hello', flowRevision: 1, commands: [], labels: [{ key: 'env', value: 'prod' }] });
    expect(obj.status).toBeUndefined();
  });

  it('creating one id from two processes at once yields one resource and the same record', async () => {
    const peer = await h.openPeer();
    const [a, b] = await Promise.all([h.stores.executions.create(sampleExecution('same')), peer.executions.create(sampleExecution('same'))]);
    expect(a.resourceVersion).toBe(b.resourceVersion);
    expect(a.execution).toEqual(b.execution);
  });

  it('deletes an execution with its commands', async () => {
    const ex = h.stores.executions;
    await ex.create(sampleExecution('e1'));
    await ex.addCommand('e1', { type: 'kill' });
    expect(await ex.delete('e1')).toBe(true);
    expect(await ex.get('e1')).toBeUndefined();
    expect(await ex.pendingCommands('e1')).toEqual([]);
    expect((await ex.search({})).total).toBe(0);
    expect(await ex.delete('e1')).toBe(false);

    // Deleted by someone else (kubectl): the cache follows.
    await ex.create(sampleExecution('e2'));
    await h.co.deleteNamespacedCustomObject({ ...crd('executions'), name: executionName('e2') });
    await until(async () => (await ex.get('e2')) === undefined, 'the deletion');
    expect(await ex.listActive()).toEqual([]);
  });

  it('writes status with the expected resourceVersion and rejects a stale one', async () => {
    const ex = h.stores.executions;
    const { execution, resourceVersion: v1 } = await ex.create(sampleExecution('e1'));
    execution.state.current = 'RUNNING';
    const updated = await ex.update(execution, v1);
    expect(updated.resourceVersion).toBeGreaterThan(v1);
    await expect(ex.update({ ...execution, error: 'stale' }, v1)).rejects.toBeInstanceOf(ConflictError);
    const stored = await ex.get('e1');
    expect(stored).toMatchObject({ resourceVersion: updated.resourceVersion, execution: { state: { current: 'RUNNING' } } });
    expect(stored?.execution.error).toBeUndefined();
    await expect(ex.update(sampleExecution('nope'), 1)).rejects.toThrow(/not found/);

    const obj = await raw('e1');
    expect(obj.status).toMatchObject({ state: 'RUNNING', startDate: execution.state.startDate, taskRunCount: 0, acked: 0 });
    expect(obj.status.record.id).toBe('e1');
    expect(obj.metadata.resourceVersion).toBe(String(updated.resourceVersion));
  });

  it('keeps a created record that is not a fresh one (state, task runs) and hides it until its status is written', async () => {
    const ex = h.stores.executions;
    const operator = await h.openPeer();
    const seen: WatchEvent[] = [];
    operator.executions.watch((e) => seen.push(e));
    const running = sampleExecution('run', { state: 'RUNNING' });
    await ex.create(running);
    expect((await ex.get('run'))?.execution.state.current).toBe('RUNNING');
    // Too large for the initial-record annotation even gzipped: the record goes to status in a second write.
    const big = sampleExecution('big');
    big.taskRunList = [{
      id: 't1', executionId: 'big', namespace: 'company.team', flowId: 'hello', taskId: 'log',
      state: { current: 'SUCCESS', histories: [], startDate: big.state.startDate }, attempts: [], outputs: { text: randomBytes(150_000).toString('base64') },
    }];
    const stored = await ex.create(big);
    expect((await ex.get('big'))).toEqual(stored);
    expect((await raw('big')).status.record.taskRunList).toHaveLength(1);
    // Another process never sees the big one without its task runs (it is invisible until its status is written).
    await until(() => seen.some((e) => e.execution.id === 'big'), 'the peer feed');
    expect(seen.filter((e) => e.execution.id === 'big').map((e) => [e.type, e.execution.taskRunList.length])).toEqual([['ADDED', 1]]);
    expect(seen.find((e) => e.execution.id === 'run')?.execution.state.current).toBe('RUNNING');
  });

  it('gzips a large initial record (a replay of many task runs) into its annotation and keeps the trigger in spec only', async () => {
    const replay = sampleExecution('replay', { state: 'RUNNING' });
    replay.trigger = { id: 'hook', type: 'ai.service.plugin.core.trigger.Webhook', variables: { body: { rows: 'r'.repeat(40_000) } } };
    replay.taskRunList = Array.from({ length: 2_000 }, (_, i) => ({
      id: `tr${i}`, executionId: 'replay', namespace: 'company.team', flowId: 'hello', taskId: `step${i % 7}`, value: String(i),
      state: { current: 'SUCCESS' as const, histories: [{ state: 'SUCCESS' as const, date: replay.state.startDate }], startDate: replay.state.startDate },
      attempts: [], outputs: { value: `result ${i}` },
    }));
    const stored = await h.stores.executions.create(replay);
    const obj = await raw('replay');
    expect(obj.status?.record ?? obj.status?.recordGz).toBeUndefined(); // one write: no status needed
    const annotation = obj.metadata.annotations['flowpilot.io/initial-record-gz'] as string;
    expect(annotation.length).toBeLessThan(128 * 1024);
    expect(obj.metadata.annotations['flowpilot.io/initial-record']).toBeUndefined();
    expect(gunzipSync(Buffer.from(annotation, 'base64')).toString()).not.toContain('rrrr'); // the body is in spec, once
    expect(obj.spec.trigger.variables.body.rows).toHaveLength(40_000);
    const peer = await h.openPeer();
    const seen = await until(() => peer.executions.get('replay'), 'the peer informer');
    expect(seen).toEqual(stored);
    expect(seen.execution).toEqual(JSON.parse(JSON.stringify(replay)));
  });

  it('reads an Execution created by hand (kubectl): id is the resource name, record derived from spec', async () => {
    await h.co.createNamespacedCustomObject({ ...crd('executions'), body: {
      apiVersion: 'flowpilot.io/v1', kind: 'Execution', metadata: { name: 'by-hand' },
      spec: { namespace: 'company', flowId: 'f', flowRevision: 2, inputs: { a: 1 } },
    } });
    const stored = await until(() => h.stores.executions.get('by-hand'), 'the hand-made execution');
    expect(stored.execution).toMatchObject({ id: 'by-hand', namespace: 'company', flowId: 'f', flowRevision: 2, inputs: { a: 1 }, state: { current: 'CREATED' } });
    expect((await h.stores.executions.listActive()).map((s) => s.execution.id)).toEqual(['by-hand']);
  });

  it('keeps ids that are not valid label values (label holds a hash, the annotation the id)', async () => {
    const id = `trigger:${'x'.repeat(70)}`;
    await h.stores.executions.create(sampleExecution(id));
    expect((await h.stores.executions.get(id))?.execution.id).toBe(id);
    const obj = await raw(id);
    expect(obj.metadata.labels[LABELS.executionId]).toMatch(/^h-[0-9a-f]{40}$/);
    expect((await h.stores.executions.search({})).results.map((e) => e.id)).toEqual([id]);
  });

  it('lists active executions oldest first and counts by state', async () => {
    const ex = h.stores.executions;
    await ex.create(sampleExecution('new', { state: 'RUNNING', startDate: '2026-01-02T00:00:00.000Z' }));
    await ex.create(sampleExecution('old', { state: 'CREATED', startDate: '2026-01-01T00:00:00.000Z' }));
    await ex.create(sampleExecution('done', { state: 'SUCCESS' }));
    await ex.create(sampleExecution('paused', { state: 'PAUSED', startDate: '2026-01-03T00:00:00.000Z' }));
    expect((await ex.listActive()).map((s) => s.execution.id)).toEqual(['old', 'new', 'paused']);
    // The summaries: the same executions in the same order, what resync and start decisions read of them.
    expect(await ex.listActiveSummaries()).toEqual((await ex.listActive()).map((s) => summaryOf(s.execution, s.resourceVersion)));
    expect(await ex.count('company.team', 'hello', ['RUNNING', 'CREATED'])).toBe(2);
    expect(await ex.count('company.team', 'hello', ['SUCCESS'])).toBe(1);
    expect(await ex.count('company', 'hello', ['SUCCESS'])).toBe(0);
  });
});

describe('KubeExecutionStore commands', () => {
  it('appends commands to spec, lists those after status.acked, and acknowledges them with the status write', async () => {
    const ex = h.stores.executions;
    await ex.create(sampleExecution('e1'));
    const kill = await ex.addCommand('e1', { type: 'kill' });
    const resume = await ex.addCommand('e1', { type: 'resume', inputs: { ok: true } });
    expect([kill.seq, resume.seq]).toEqual([1, 2]);
    expect((await ex.pendingCommands('e1')).map((c) => c.command)).toEqual([{ type: 'kill' }, { type: 'resume', inputs: { ok: true } }]);
    expect((await raw('e1')).spec.commands).toMatchObject([{ seq: 1, type: 'kill' }, { seq: 2, type: 'resume', inputs: { ok: true } }]);

    // A command bumps the resource's resourceVersion: a write based on the record read before it conflicts.
    const before = (await ex.get('e1'))!;
    await ex.addCommand('e1', { type: 'restart' });
    await expect(ex.update(before.execution, before.resourceVersion, [kill.seq])).rejects.toBeInstanceOf(ConflictError);
    expect((await ex.pendingCommands('e1')).length).toBe(3);

    const fresh = (await ex.get('e1'))!;
    await ex.update(fresh.execution, fresh.resourceVersion, [kill.seq, resume.seq]);
    expect((await ex.pendingCommands()).map((c) => [c.executionId, c.seq, c.command.type])).toEqual([['e1', 3, 'restart']]);
    expect((await raw('e1')).status.acked).toBe(2);
    await expect(ex.addCommand('missing', { type: 'kill' })).rejects.toThrow(/not found/);
    // The amendments of an ended execution carry their labels / state through the resource (the CRD schema allows them).
    await ex.addCommand('e1', { type: 'set-labels', labels: [{ key: 'k', value: 'v' }] });
    await ex.addCommand('e1', { type: 'change-state', state: 'FAILED' });
    expect((await ex.pendingCommands('e1')).map((c) => c.command).slice(-2)).toEqual([
      { type: 'set-labels', labels: [{ key: 'k', value: 'v' }] }, { type: 'change-state', state: 'FAILED' },
    ]);
    await expect(ex.addCommand('e1', { type: 'change-state', state: 'RUNNING' } as never)).rejects.toMatchObject({ status: 422 });
    // A command the CRD schema refuses is an error at once (not a lost race to retry).
    const patches = h.srv.stats.writes['PATCH executions'] ?? 0;
    await expect(ex.addCommand('e1', { type: 'bogus' } as never)).rejects.toMatchObject({ status: 422, message: /Invalid command/ });
    expect(h.srv.stats.writes['PATCH executions']).toBe(patches + 1);
  });

  it('gives concurrent writers in two processes distinct seqs', async () => {
    const peer = await h.openPeer();
    await h.stores.executions.create(sampleExecution('e1'));
    await until(() => peer.executions.get('e1'), 'the peer cache');
    const sent = await Promise.all(Array.from({ length: 8 }, (_, i) =>
      (i % 2 ? peer : h.stores).executions.addCommand('e1', { type: 'resume', inputs: { i } })));
    expect(sent.map((c) => c.seq).sort((a, b) => a - b)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    const spec = (await raw('e1')).spec.commands as { seq: number; inputs: { i: number } }[];
    expect(spec.map((c) => c.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    expect(new Set(spec.map((c) => c.inputs.i)).size).toBe(8);
  });
});

describe('KubeExecutionStore search', () => {
  beforeEach(async () => {
    const add = (id: string, day: number, opts: Parameters<typeof sampleExecution>[1]) =>
      h.stores.executions.create(sampleExecution(id, { ...opts, startDate: `2026-03-0${day}T10:00:00.000Z` }));
    await add('a', 1, { namespace: 'company', flowId: 'f1', state: 'SUCCESS', labels: [{ key: 'env', value: 'prod' }, { key: 'team', value: 'x' }] });
    await add('b', 2, { namespace: 'company.team', flowId: 'f1', state: 'FAILED', labels: [{ key: 'env', value: 'prod' }] });
    await add('c', 3, { namespace: 'company.team', flowId: 'f2', state: 'RUNNING', labels: [{ key: 'env', value: 'dev' }, { key: 'team', value: 'x' }] });
    await add('d', 4, { namespace: 'companyx', flowId: 'f1', state: 'SUCCESS' });
  });

  const ids = async (q: Parameters<StoreHarness['stores']['executions']['search']>[0]) =>
    (await h.stores.executions.search(q)).results.map((e) => e.id);

  it('filters by namespace prefix, flow and states, newest first', async () => {
    expect(await ids({})).toEqual(['d', 'c', 'b', 'a']);
    expect(await ids({ namespace: 'company' })).toEqual(['c', 'b', 'a']);
    expect(await ids({ namespace: 'company', flowId: 'f1' })).toEqual(['b', 'a']);
    expect(await ids({ state: ['SUCCESS', 'RUNNING'] })).toEqual(['d', 'c', 'a']);
  });

  it('requires every label to match and follows label changes made by updates', async () => {
    expect(await ids({ labels: { env: 'prod' } })).toEqual(['b', 'a']);
    expect(await ids({ labels: { env: 'prod', team: 'x' } })).toEqual(['a']);
    const stored = (await h.stores.executions.get('c'))!;
    stored.execution.labels = [{ key: 'env', value: 'prod' }];
    await h.stores.executions.update(stored.execution, stored.resourceVersion);
    expect(await ids({ labels: { env: 'prod' } })).toEqual(['c', 'b', 'a']);
    expect(await ids({ labels: { team: 'x' } })).toEqual(['a']);
  });

  it('filters by start date range (inclusive, any ISO offset) and pages with a total', async () => {
    expect(await ids({ startDate: '2026-03-02T10:00:00Z', endDate: '2026-03-03T11:00:00+01:00' })).toEqual(['c', 'b']);
    const page = await h.stores.executions.search({ limit: 2, offset: 1 });
    expect(page.results.map((e) => e.id)).toEqual(['c', 'b']);
    expect(page.total).toBe(4);
  });
});

describe('KubeExecutionStore feeds', () => {
  it('notifies watchers in this process after the write is visible, in order', async () => {
    const ex = h.stores.executions;
    const events: string[] = [];
    const commands: PendingCommand[] = [];
    const stop = ex.watch((e) => { events.push(`${e.type}:${e.execution.state.current}`); });
    ex.watch((e) => { void ex.get(e.execution.id).then((s) => { if (s!.resourceVersion < e.resourceVersion) events.push('STALE'); }); });
    ex.onCommand((c) => commands.push(c));
    const { execution, resourceVersion } = await ex.create(sampleExecution('e1'));
    execution.state.current = 'RUNNING';
    const v2 = (await ex.update(execution, resourceVersion)).resourceVersion;
    await ex.addCommand('e1', { type: 'kill' });
    stop();
    await ex.update(execution, (await ex.get('e1'))!.resourceVersion);
    expect(events.slice(0, 2)).toEqual(['ADDED:CREATED', 'MODIFIED:RUNNING']);
    expect(events).not.toContain('STALE');
    expect(commands.map((c) => [c.executionId, c.seq, c.command.type])).toEqual([['e1', 1, 'kill']]);
    expect(v2).toBeGreaterThan(resourceVersion);
  });

  it('a listener that writes sees its own event after the current one reached every listener', async () => {
    const ex = h.stores.executions;
    const seen: string[] = [];
    ex.watch((e) => {
      seen.push(`A:${e.type}`);
      if (e.type === 'ADDED') void ex.update(e.execution, e.resourceVersion);
    });
    ex.watch((e) => { seen.push(`B:${e.type}`); });
    await ex.create(sampleExecution('e1'));
    await until(() => seen.length >= 4, 'the write of the listener');
    expect(seen).toEqual(['A:ADDED', 'B:ADDED', 'A:MODIFIED', 'B:MODIFIED']);
  });

  it('another process sees ADDED, MODIFIED and new commands through its informer', async () => {
    const operator = await h.openPeer();
    const events: WatchEvent[] = [];
    const commands: PendingCommand[] = [];
    operator.executions.watch((e) => events.push(e));
    operator.executions.onCommand((c) => commands.push(c));
    const { execution, resourceVersion } = await h.stores.executions.create(sampleExecution('e1'));
    await until(() => events.length >= 1, 'ADDED');
    expect(events[0]).toMatchObject({ type: 'ADDED', resourceVersion, execution: { id: 'e1', state: { current: 'CREATED' } } });
    await h.stores.executions.addCommand('e1', { type: 'resume', inputs: { x: 1 } });
    await until(() => commands.length >= 1, 'the command');
    expect(commands[0]).toMatchObject({ executionId: 'e1', seq: 1, command: { type: 'resume', inputs: { x: 1 } } });
    const seen = (await operator.executions.get('e1'))!;
    execution.state.current = 'RUNNING';
    await operator.executions.update(execution, seen.resourceVersion, [1]);
    await until(async () => (await h.stores.executions.get('e1'))?.execution.state.current === 'RUNNING', 'the status in the API process');
    expect(await h.stores.executions.pendingCommands('e1')).toEqual([]);
    // A restarted operator does not replay commands that existed before it started (it reads pendingCommands()).
    const restarted = await h.openPeer();
    const replayed: PendingCommand[] = [];
    restarted.executions.onCommand((c) => replayed.push(c));
    await h.stores.executions.addCommand('e1', { type: 'kill' });
    await until(() => replayed.length >= 1, 'the new command');
    expect(replayed.map((c) => c.seq)).toEqual([2]);
    expect(events.map((e) => e.type)).toContain('MODIFIED');
  });
});

describe('KubeExecutionStore daily statistics', () => {
  it('counts the cached records by UTC day and state, with the durations of the ended ones and the filters', async () => {
    const ex = h.stores.executions;
    const at = (id: string, ns: string, state: 'SUCCESS' | 'FAILED' | 'RUNNING', start: string, seconds?: number) => {
      const e = sampleExecution(id, { namespace: ns, state, startDate: start });
      if (seconds !== undefined) e.state.endDate = new Date(Date.parse(start) + seconds * 1000).toISOString();
      return e;
    };
    await ex.create(at('s1', 'stats.a', 'SUCCESS', '2024-03-01T01:00:00.000Z', 2));
    await ex.create(at('s2', 'stats.a.b', 'SUCCESS', '2024-03-01T02:00:00.000Z', 4));
    await ex.create(at('s3', 'stats.a', 'FAILED', '2024-03-02T02:00:00.000Z', 1));
    await ex.create(at('s4', 'stats.ab', 'RUNNING', '2024-03-02T03:00:00.000Z'));
    await ex.create(at('s5', 'stats.a', 'SUCCESS', '2024-02-01T03:00:00.000Z', 1));
    const range = { startDate: '2024-03-01T00:00:00Z', endDate: '2024-03-02T23:59:59Z' };
    expect(await ex.dailyStats({ ...range, namespace: 'stats.a' })).toEqual([
      { day: '2024-03-01', state: 'SUCCESS', count: 2, ended: 2, durationMinMs: 2000, durationMaxMs: 4000, durationSumMs: 6000 },
      { day: '2024-03-02', state: 'FAILED', count: 1, ended: 1, durationMinMs: 1000, durationMaxMs: 1000, durationSumMs: 1000 },
    ]);
    expect((await ex.dailyStats(range)).map((r) => [r.day, r.state, r.count])).toEqual([
      ['2024-03-01', 'SUCCESS', 2], ['2024-03-02', 'FAILED', 1], ['2024-03-02', 'RUNNING', 1],
    ]);
    expect(await ex.dailyStats({ ...range, filters: [{ kind: 'q', op: 'EQUALS', value: 's3' }] })).toHaveLength(1);
  });
});
