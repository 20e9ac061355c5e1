// The scheduler end to end: real SQLite stores, the real controller running the executions, an injected clock the
// test advances; restarts in the middle (stores and service closed and reopened) recover missed dates per policy and
// never run a date twice, also after a crash between creating an execution and saving the trigger state.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createSecretRenderer, startController, type Controller } from '../../controller/index.js';
import { isTerminal, type Execution } from '../../core/types.js';
import { initExpressions } from '../../expr/index.js';
import { parseFlow } from '../../model/index.js';
import { openEmbeddedStores, type EmbeddedStores } from '../../store/sqlite/index.js';
import { startTriggeredExecution } from '../create.js';
import { startTriggerService, type TriggerService } from '../service.js';
import type { TriggerServiceDeps } from '../types.js';
import { createScheduler, type SchedulerComponent } from './scheduler.js';

const SCHEDULE = 'ai.service.plugin.core.trigger.Schedule';

interface Node { stores: EmbeddedStores; controller: Controller; service: TriggerService; scheduler: SchedulerComponent; errors: unknown[] }

let dataDir: string;
let node: Node | undefined;
let now = new Date('2026-05-10T10:20:00Z');
const clock = () => new Date(now);

beforeAll(async () => { await initExpressions(); });

async function boot(env: NodeJS.ProcessEnv = {}): Promise<Node> {
  const stores = openEmbeddedStores(dataDir);
  const controller = await startController(stores, { dataDir, env: { PATH: process.env.PATH } });
  const errors: unknown[] = [];
  const deps: TriggerServiceDeps = {
    stores, renderer: createSecretRenderer(stores, env), clock, env, onError: (err) => { errors.push(err); },
  };
  const scheduler = createScheduler({ maxSleepMs: 20, lockRecheckMs: 50 });
  const service = await startTriggerService(deps, [scheduler]);
  node = { stores, controller, service, scheduler, errors };
  return node;
}

async function shutdown(): Promise<void> {
  if (!node) return;
  const n = node;
  node = undefined;
  await n.service.stop();
  await n.controller.stop();
  await n.stores.close();
}

afterEach(async () => {
  await shutdown();
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });
});

function flowYaml(id: string, triggers: string, tasks?: string): string {
  return `id: ${id}
namespace: sched
inputs:
  - id: who
    type: STRING
    defaults: nobody
tasks:
${tasks ?? `  - id: log
    type: ai.service.plugin.core.debug.Return
    format: "{{ trigger.date }} {{ inputs.who }}"`}
triggers:
${triggers}`;
}

/** Saves a flow and lets the running scheduler see it before the test moves the clock. */
async function saveFlow(stores: EmbeddedStores, yaml: string): Promise<void> {
  await stores.flows.save(parseFlow(yaml), yaml);
  await node?.scheduler.evaluateNow();
}

async function executions(stores: EmbeddedStores, flowId: string): Promise<Execution[]> {
  const page = await stores.executions.search({ namespace: 'sched', flowId, limit: 1000 });
  return page.results;
}

const byTrigger = (list: Execution[], triggerId: string) =>
  list.filter((e) => e.trigger?.id === triggerId).map((e) => String(e.trigger?.variables?.date)).sort();

async function until<T>(f: () => Promise<T>, ok: (v: T) => boolean, what: string, timeoutMs = 15_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await f();
    if (ok(v)) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Waits until every execution of the flow is terminal and the scheduler has nothing left to start. */
async function settle(n: Node, flowId: string, expected: number): Promise<Execution[]> {
  return until(async () => {
    await n.scheduler.evaluateNow();
    return executions(n.stores, flowId);
  }, (l) => l.length >= expected && l.every((e) => isTerminal(e.state.current)), `${expected} terminal executions of ${flowId} (errors: ${n.errors.map(String).join("; ")})`);
}

describe('scheduler', () => {
  it('runs each due date once with trigger.date/next/previous, inputs and labels rendered', async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'sched-'));
    now = new Date('2026-05-10T10:20:00Z');
    const n = await boot();
    await saveFlow(n.stores, flowYaml('basic', `  - id: hourly
    type: ${SCHEDULE}
    cron: "@hourly"
    timezone: Europe/Paris
    inputs:
      who: "sched-{{ trigger.date }}"
    labels:
      slot: "{{ trigger.date }}"`));
    await n.scheduler.evaluateNow();
    expect(await executions(n.stores, 'basic')).toHaveLength(0);
    now = new Date('2026-05-10T11:00:00.010Z');
    const [e] = await settle(n, 'basic', 1);
    expect(e!.trigger?.variables).toEqual({ date: '2026-05-10T13:00:00+02:00', next: '2026-05-10T14:00:00+02:00', previous: '2026-05-10T12:00:00+02:00' });
    expect(e!.inputs.who).toBe('sched-2026-05-10T13:00:00+02:00');
    expect(e!.labels).toContainEqual({ key: 'slot', value: '2026-05-10T13:00:00+02:00' });
    expect(e!.state.current).toBe('SUCCESS');
    await n.scheduler.evaluateNow();
    expect(await executions(n.stores, 'basic')).toHaveLength(1);
    const rec = await n.stores.triggers.get('sched', 'basic', 'hourly');
    expect(rec?.state).toMatchObject({ date: '2026-05-10T11:00:00.000Z', cursor: '2026-05-10T11:00:00.000Z' });
    expect(n.errors).toEqual([]);
  });

  it('never overlaps: the next date waits for the running execution, then runs with its own date', async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'sched-'));
    now = new Date('2026-05-10T10:20:00Z');
    const n = await boot();
    await saveFlow(n.stores, flowYaml('slow', `  - id: hourly
    type: ${SCHEDULE}
    cron: "0 * * * *"`, `  - id: wait
    type: ai.service.plugin.core.flow.Pause`));
    now = new Date('2026-05-10T11:00:01Z');
    const [first] = await until(async () => { await n.scheduler.evaluateNow(); return executions(n.stores, 'slow'); },
      (l) => l.length === 1 && l[0]!.state.current === 'PAUSED', 'a paused execution');
    now = new Date('2026-05-10T12:30:00Z');
    await n.scheduler.evaluateNow();
    await n.scheduler.evaluateNow();
    expect(await executions(n.stores, 'slow')).toHaveLength(1);
    await n.stores.executions.addCommand(first!.id, { type: 'resume' });
    const list = await until(async () => executions(n.stores, 'slow'), (l) => l.length === 2, 'the waiting date');
    expect(byTrigger(list, 'hourly')).toEqual(['2026-05-10T11:00:00Z', '2026-05-10T12:00:00Z']);
  });

  it('after a restart, missed dates follow recoverMissedSchedules (ALL, LAST, NONE) and nothing runs twice', async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'sched-'));
    now = new Date('2026-05-10T10:20:00Z');
    let n = await boot({ TRIGGER_RECOVER_MISSED_SCHEDULES: 'NONE' });
    const trig = (id: string, policy?: string) => `  - id: ${id}
    type: ${SCHEDULE}
    cron: "0 * * * *"${policy ? `\n    recoverMissedSchedules: ${policy}` : ''}`;
    await saveFlow(n.stores, flowYaml('recover', [trig('all', 'ALL'), trig('last', 'LAST'), trig('global')].join('\n')));
    await n.scheduler.evaluateNow(); // the new schedules start from 10:20
    now = new Date('2026-05-10T11:00:00Z');
    await settle(n, "recover", 3);
    await shutdown();

    // Down from 11:00 to 14:30. A crash had left the 12:00 execution of `all` created but its state unsaved.
    now = new Date('2026-05-10T14:30:00Z');
    {
      const stores = openEmbeddedStores(dataDir);
      const rec = await stores.flows.get('sched', 'recover');
      const trigger = rec!.flow.triggers!.find((t) => t.id === 'all')!;
      await startTriggeredExecution(stores, {
        flow: rec!.flow, trigger, variables: { date: '2026-05-10T12:00:00Z' }, dedupeKey: '2026-05-10T12:00:00.000Z', now,
      }, createSecretRenderer(stores, {}));
      await stores.close();
    }
    n = await boot({ TRIGGER_RECOVER_MISSED_SCHEDULES: 'NONE' });
    let list = await settle(n, 'recover', 7);
    expect(byTrigger(list, 'all')).toEqual(['2026-05-10T11:00:00Z', '2026-05-10T12:00:00Z', '2026-05-10T13:00:00Z', '2026-05-10T14:00:00Z']);
    expect(byTrigger(list, 'last')).toEqual(['2026-05-10T11:00:00Z', '2026-05-10T14:00:00Z']);
    expect(byTrigger(list, 'global')).toEqual(['2026-05-10T11:00:00Z']); // the global default NONE

    // Restart again right away: nothing is created twice; the next hour runs once per trigger.
    await shutdown();
    n = await boot({ TRIGGER_RECOVER_MISSED_SCHEDULES: 'NONE' });
    await n.scheduler.evaluateNow();
    expect(await executions(n.stores, 'recover')).toHaveLength(7);
    now = new Date('2026-05-10T15:00:00Z');
    list = await settle(n, 'recover', 10);
    expect(list).toHaveLength(10);
    for (const id of ['all', 'last', 'global']) expect(byTrigger(list, id).at(-1)).toBe('2026-05-10T15:00:00Z');
    expect(n.errors).toEqual([]);
  });

  it('a trigger disabled through its state (API) creates nothing; a removed trigger forgets its state', async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'sched-'));
    now = new Date('2026-05-10T10:20:00Z');
    const n = await boot();
    const yaml = flowYaml('toggle', `  - id: hourly
    type: ${SCHEDULE}
    cron: "0 * * * *"`);
    await saveFlow(n.stores, yaml);
    await n.scheduler.evaluateNow();
    const rec = await n.stores.triggers.get('sched', 'toggle', 'hourly');
    await n.stores.triggers.put({ namespace: 'sched', flowId: 'toggle', triggerId: 'hourly', disabled: true, state: rec!.state }, rec!.version);
    now = new Date('2026-05-10T12:00:00Z');
    await n.scheduler.evaluateNow();
    await n.scheduler.evaluateNow();
    expect(await executions(n.stores, 'toggle')).toHaveLength(0);
    const off = await n.stores.triggers.get('sched', 'toggle', 'hourly');
    expect(off).toMatchObject({ disabled: true, state: { cursor: '2026-05-10T12:00:00.000Z' } });
    await saveFlow(n.stores, yaml.replace(/triggers:[\s\S]*/, 'triggers: []\n'));
    await until(() => n.stores.triggers.get('sched', 'toggle', 'hourly'), (r) => r === undefined, 'state removed');
  });

  it('conditions on trigger.date skip dates without creating executions (weekdays only)', async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'sched-'));
    now = new Date('2026-05-08T10:00:00Z'); // a Friday
    const n = await boot();
    await saveFlow(n.stores, flowYaml('weekdays', `  - id: daily
    type: ${SCHEDULE}
    cron: "0 9 * * *"
    timezone: Europe/Paris
    conditions:
      - type: ai.service.plugin.core.condition.NotCondition
        conditions:
          - type: ai.service.plugin.core.condition.WeekendCondition
            date: "{{ trigger.date }}"`));
    now = new Date('2026-05-11T07:00:30Z'); // Monday 09:00:30 in Paris
    const list = await settle(n, 'weekdays', 1);
    expect(byTrigger(list, 'daily')).toEqual(['2026-05-11T09:00:00+02:00']);
    expect((await n.stores.triggers.get('sched', 'weekdays', 'daily'))?.state).toMatchObject({ cursor: '2026-05-11T07:00:00.000Z' });
    expect(n.errors).toEqual([]);
  });

  it('a schedule removed while the service was down loses its state at the next start', async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'sched-'));
    now = new Date('2026-05-10T10:20:00Z');
    let n = await boot();
    const yaml = flowYaml('gone', `  - id: hourly
    type: ${SCHEDULE}
    cron: "0 * * * *"`);
    await saveFlow(n.stores, yaml);
    expect(await n.stores.triggers.get('sched', 'gone', 'hourly')).toBeDefined();
    await shutdown();
    const stores = openEmbeddedStores(dataDir);
    const bare = yaml.replace(/triggers:[\s\S]*/, 'triggers: []\n');
    await stores.flows.save(parseFlow(bare), bare);
    await stores.close();
    n = await boot();
    await n.scheduler.evaluateNow();
    expect(await n.stores.triggers.get('sched', 'gone', 'hourly')).toBeUndefined();
  });

  it('stopAfter disables the trigger when its execution ends in a listed state', async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'sched-'));
    now = new Date('2026-05-10T10:20:00Z');
    const n = await boot();
    await saveFlow(n.stores, flowYaml('fragile', `  - id: hourly
    type: ${SCHEDULE}
    cron: "0 * * * *"
    stopAfter: [FAILED]`, `  - id: boom
    type: ai.service.plugin.core.execution.Fail
    errorMessage: "{{ trigger.date }}"`));
    now = new Date('2026-05-10T11:00:00Z');
    const [failed] = await settle(n, 'fragile', 1);
    expect(failed!.state.current).toBe('FAILED');
    await until(() => n.stores.triggers.get('sched', 'fragile', 'hourly'), (r) => r?.disabled === true, 'trigger disabled');
    now = new Date('2026-05-10T13:00:00Z');
    await n.scheduler.evaluateNow();
    expect(await executions(n.stores, 'fragile')).toHaveLength(1);
  });

  it('DST days run each daily schedule once (Paris spring forward at 03:30, New York fall back at the first 01:30)', async () => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'sched-'));
    now = new Date('2026-03-28T12:00:00Z');
    const n = await boot();
    await saveFlow(n.stores, flowYaml('paris', `  - id: daily
    type: ${SCHEDULE}
    cron: "30 2 * * *"
    timezone: Europe/Paris`));
    now = new Date('2026-03-29T04:00:00Z');
    expect(byTrigger(await settle(n, 'paris', 1), 'daily')).toEqual(['2026-03-29T03:30:00+02:00']);

    now = new Date('2026-10-31T12:00:00Z');
    await saveFlow(n.stores, flowYaml('newyork', `  - id: daily
    type: ${SCHEDULE}
    cron: "30 1 * * *"
    timezone: America/New_York`));
    now = new Date('2026-11-01T05:45:00Z'); // 01:45 EDT
    await settle(n, 'newyork', 1);
    now = new Date('2026-11-01T07:00:00Z'); // 02:00 EST, after the second 01:30
    await n.scheduler.evaluateNow();
    expect(byTrigger(await settle(n, 'newyork', 1), 'daily')).toEqual(['2026-11-01T01:30:00-04:00']);
  });
});
