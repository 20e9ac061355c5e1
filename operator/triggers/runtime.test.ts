// The plugin-trigger runtime with in-process test double sources (no external service): polls never overlap, a
// failing poll is logged with secrets masked and retried, commit runs only after the execution exists, conditions
// gate creation, flow changes restart a trigger, API-disabled triggers stop, a listener that cannot start is retried,
// and backoff() grows, caps and jitters.
import { afterEach, expect, it } from 'vitest';
import { backoff } from './runtime.js';
import { withSources } from './sources/index.js';
import { flowYaml, startHarness, waitFor, type Harness } from './sources/test-harness.js';
import type { PollingTriggerPlugin, RealtimeTriggerPlugin } from './types.js';

let h: Harness | undefined;
afterEach(async () => { await h?.close(); h = undefined; });

const POLL = 'ai.service.plugin.test.Poll';
const LISTEN = 'ai.service.plugin.test.Listen';
const poller = (poll: PollingTriggerPlugin['poll']): PollingTriggerPlugin => ({ kind: 'polling', type: POLL, schema: {}, defaultInterval: 'PT0.05S', poll });
const trig = (extra = '') => `id: t\ntype: ${POLL}\n${extra}`;

it('backoff grows exponentially, is capped and jittered', () => {
  expect([0, 1, 2, 3].map((a) => backoff(a, { baseMs: 100, random: () => 1 }))).toEqual([100, 200, 400, 800]);
  expect([0, 1, 2, 3].map((a) => backoff(a, { baseMs: 100, random: () => 0 }))).toEqual([50, 100, 200, 400]);
  expect(backoff(50, { baseMs: 100, maxMs: 5000, random: () => 1 })).toBe(5000);
  const samples = Array.from({ length: 200 }, () => backoff(4, { baseMs: 100 }));
  expect(Math.min(...samples)).toBeGreaterThanOrEqual(800);
  expect(Math.max(...samples)).toBeLessThanOrEqual(1600);
  expect(new Set(samples).size).toBeGreaterThan(10);
});

it('polls of one trigger never overlap, even when a poll outlasts the interval (test double source)', async () => {
  let active = 0, maxActive = 0, polls = 0;
  h = await startHarness({
    plugins: withSources(poller(async () => {
      active++; polls++; maxActive = Math.max(maxActive, active);
      await new Promise((r) => setTimeout(r, 150));
      active--;
      return undefined;
    })),
  });
  await h.save(flowYaml('slow', trig('interval: PT0.01S')));
  await waitFor(() => polls >= 4, 'four polls');
  expect(maxActive).toBe(1);
});

it('a failing poll is logged with secrets masked and retried next interval (test double source)', async () => {
  let polls = 0;
  h = await startHarness({
    env: { SECRET_DB_PASSWORD: 'hunter2-secret' },
    plugins: withSources(poller(async (ctx) => {
      polls++;
      const password = ctx.render(ctx.trigger.password) as string;
      throw new Error(`login failed for password ${password}`);
    })),
  });
  await h.save(flowYaml('failing', trig(`password: "{{ secret('DB_PASSWORD') }}"`)));
  await waitFor(() => polls >= 3, 'three polls');
  const failures = h.logs.filter((l) => l.includes('poll failed'));
  expect(failures.length).toBeGreaterThanOrEqual(2);
  expect(failures[0]).toContain('login failed for password ******');
  expect(h.logs.join('\n')).not.toContain('hunter2-secret');
});

it('commit runs only after the execution exists; a condition that does not hold creates nothing and commits nothing (test double source)', async () => {
  const committed: boolean[] = [];
  let n = 0;
  h = await startHarness({
    conditions: async (_c, ctx) => (ctx.variables?.trigger as { n: number }).n % 2 === 0,
    plugins: withSources(poller(async (ctx) => {
      const i = n++;
      return {
        event: { dedupeKey: `e${i}`, variables: { n: i } },
        commit: async () => { committed.push((await ctx.stores.executions.search({ flowId: 'commits' })).results.some((e) => e.trigger?.variables?.n === i)); },
      };
    })),
  });
  await h.save(flowYaml('commits', trig('conditions:\n  - type: ai.service.plugin.core.condition.ExpressionCondition\n    expression: "{{ trigger.n % 2 == 0 }}"')));
  await waitFor(() => committed.length >= 3, 'three commits');
  await h.stopComponent();
  expect(committed.every(Boolean)).toBe(true);
  const execs = await h.executions('commits');
  expect(execs.every((e) => (e.trigger!.variables!.n as number) % 2 === 0)).toBe(true);
  expect(execs.length).toBe(committed.length);
});

it('a new flow revision restarts the trigger; disabling it through the API stops it (test double source)', async () => {
  const revisions = new Set<number>();
  h = await startHarness({ plugins: withSources(poller(async (ctx) => { revisions.add(ctx.flow.revision ?? 0); return undefined; })) });
  await h.save(flowYaml('rev', trig()));
  await waitFor(() => revisions.has(1), 'revision 1 polled');
  await h.save(flowYaml('rev', trig('description: changed')));
  await waitFor(() => revisions.has(2), 'revision 2 polled');
  expect(h.component.running()).toEqual(['company.team/rev/t']);
  await h.stores.triggers.put({ namespace: 'company.team', flowId: 'rev', triggerId: 't', disabled: true, state: {} }, 0);
  await h.component.resync();
  expect(h.component.running()).toEqual([]);
});

it('a realtime listener that cannot start is retried with backoff; events are created with their dedupe key once (test double source)', async () => {
  let attempts = 0;
  const listener: RealtimeTriggerPlugin = {
    kind: 'realtime', type: LISTEN, schema: {},
    async listen(_ctx, emit) {
      if (++attempts < 3) throw new Error('connection refused');
      await emit({ dedupeKey: 'same', variables: { value: 1 } });
      await emit({ dedupeKey: 'same', variables: { value: 1 } }); // a redelivery
      return { stop: async () => undefined };
    },
  };
  h = await startHarness({ plugins: withSources(listener) });
  await h.save(flowYaml('rt', `id: t\ntype: ${LISTEN}`));
  await waitFor(async () => (await h!.executions('rt')).length === 1, 'the event created');
  expect(attempts).toBe(3);
  expect(h.logs.filter((l) => l.includes('listener failed to start'))).toHaveLength(2);
  expect(await h.executions('rt')).toHaveLength(1);
});

it('stopAfter: the trigger disables itself once one of its executions ends in a listed state (test double source)', async () => {
  let n = 0;
  h = await startHarness({ plugins: withSources(poller(async () => ({ event: { dedupeKey: `e${n}`, variables: { n: n++ } } }))) });
  await h.save(flowYaml('stopper', trig('interval: PT0.2S\nstopAfter: [SUCCESS]')));
  const [first] = await waitFor(async () => { const e = await h!.executions('stopper'); return e.length >= 1 && e; }, 'an execution');
  // The controller would finish it; here the record is moved to SUCCESS directly.
  const stored = (await h.stores.executions.get(first!.id))!;
  const date = new Date().toISOString();
  const done = { ...stored.execution, state: { ...stored.execution.state, current: 'SUCCESS' as const, histories: [...stored.execution.state.histories, { state: 'SUCCESS' as const, date }], endDate: date } };
  await h.stores.executions.update(done, stored.resourceVersion);
  await waitFor(() => h!.component.running().length === 0, 'trigger stopped');
  // running() drops the trigger as soon as its stop starts; a poll already creating may still add one execution.
  // resync() is serialized after that stop, so once it returns the poll loop is over and the count is final.
  await h.component.resync();
  expect((await h.stores.triggers.get('company.team', 'stopper', 't'))?.disabled).toBe(true);
  const count = (await h.executions('stopper')).length;
  await new Promise((r) => setTimeout(r, 600));
  expect(await h.executions('stopper')).toHaveLength(count);
});
