// Tests of core.log.Fetch over the real SQLite log store: this execution's lines, by level and task, another
// execution of the namespace, and the tenancy rule for other namespaces.
import { afterEach, expect, it } from 'vitest';
import type { LogLevel } from '../core/types.js';
import { logFetchPlugin } from './log.js';
import { makeTestContext, type TestContext } from './testing.js';

let t: TestContext | undefined;
afterEach(async () => { await t?.cleanup(); t = undefined; delete process.env.LOGS_MAX_LINES; });

const line = (executionId: string, taskId: string, level: LogLevel, message: string, namespace = 'company.team', flowId = 'flow1') =>
  ({ executionId, namespace, flowId, taskId, taskRunId: `${taskId}-run`, attemptNumber: 1, level, message, timestamp: new Date().toISOString() });

async function fetchRows(props: Record<string, unknown>) {
  t ??= makeTestContext({ task: { id: 'fetch', type: logFetchPlugin.type } });
  t.ctx.task = { id: 'fetch', type: logFetchPlugin.type, ...props };
  const r = await logFetchPlugin.run(t.ctx);
  const rows = r.state === 'SUCCESS' ? (await t.stores.storage.get(r.outputs!.uri as string)).toString().split('\n').filter(Boolean).map((l) => JSON.parse(l)) : [];
  return { r, rows };
}

function seed() {
  t = makeTestContext({ task: { id: 'fetch', type: logFetchPlugin.type } });
  t.stores.logs.append([
    line('exec1', 'hello', 'INFO', 'Hello'), line('exec1', 'hello', 'DEBUG', 'debug'), line('exec1', 'boom', 'ERROR', 'bad'),
    line('exec2', 'other', 'WARN', 'from exec2'),
    line('exec3', 'x', 'ERROR', 'tenant secret', 'victim.ns', 'vflow'),
  ]);
}

it('writes the current execution lines at INFO and above as rows; size counts them', async () => {
  seed();
  const { r, rows } = await fetchRows({});
  expect(r.outputs?.size).toBe(2);
  expect(r.outputs?.uri).toMatch(/\/executions\/exec1\/tasks\/fetch\/tr1\/[0-9a-f-]+\.ion$/);
  expect(rows.map((x) => x.message)).toEqual(['Hello', 'bad']);
  expect(rows[1]).toMatchObject({ namespace: 'company.team', flowId: 'flow1', executionId: 'exec1', taskId: 'boom', level: 'ERROR' });
});

it('filters by level and tasksId; reads another execution of the flow', async () => {
  seed();
  expect((await fetchRows({ level: 'ERROR' })).rows.map((x) => x.message)).toEqual(['bad']);
  expect((await fetchRows({ level: 'DEBUG', tasksId: ['hello'] })).rows.map((x) => x.message)).toEqual(['Hello', 'debug']);
  expect((await fetchRows({ executionId: 'exec2' })).rows.map((x) => x.message)).toEqual(['from exec2']);
});

it("never returns another namespace's lines: refused by namespace, empty by id alone", async () => {
  seed();
  expect((await fetchRows({ executionId: 'exec3' })).r.outputs?.size).toBe(0);
  const denied = await fetchRows({ executionId: 'exec3', namespace: 'victim.ns', flowId: 'vflow' });
  expect(denied.r.state).toBe('FAILED');
  expect(denied.r.error).toMatch(/not accessible from namespace 'company.team'.*ALLOWED_NAMESPACES/);
});

it('stops at LOGS_MAX_LINES with a warning naming it', async () => {
  seed();
  process.env.LOGS_MAX_LINES = '1';
  const { r, rows } = await fetchRows({});
  expect(r.outputs?.size).toBe(1);
  expect(rows).toHaveLength(1);
  expect(t!.messages('WARN').join()).toMatch(/LOGS_MAX_LINES/);
});
