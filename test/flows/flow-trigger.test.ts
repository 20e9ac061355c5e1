// Flow triggers end to end on the embedded service (real SQLite, controller, REST API) plus the Flow trigger
// component: A ends → B starts once with inputs from A's outputs; restarts of the component (including executions
// that ended while it was stopped, and a crash between creating B and marking A done) never create a second B;
// ExecutionStatus/ExecutionFlow conditions and preconditions.where filter; disabled flows/triggers (in the source or through the trigger state store) create nothing; preconditions wait for
// every upstream flow; a flow does not trigger itself without explicit conditions. (The fixture format of
// fixtures.test.ts runs one flow; triggered flows need the trigger component, hence this dedicated test.)
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSecretRenderer } from '../../operator/controller/secrets.js';
import type { Execution } from '../../operator/core/types.js';
import { startTriggeredExecution } from '../../operator/triggers/create.js';
import { createFlowTriggerComponent } from '../../operator/triggers/flow-trigger.js';
import { flowTriggerVariables } from '../../operator/triggers/flow-trigger-match.js';
import type { TriggerComponent, TriggerServiceDeps } from '../../operator/triggers/types.js';
import { startEmbedded, type Embedded } from '../support/embedded.js';
import { until as waitUntil } from '../support/wait.js';

const NS = 'chain.team';
const C = 'io.kestra.plugin.core.condition.';
const TERMINAL = ['SUCCESS', 'WARNING', 'FAILED', 'KILLED', 'CANCELLED', 'RETRIED'];

const upstream = (id: string) => `id: ${id}
namespace: ${NS}
inputs:
  - { id: fail, type: BOOLEAN, defaults: false }
tasks:
  - { id: fail_maybe, type: io.kestra.plugin.core.execution.Fail, condition: "{{ inputs.fail }}", errorMessage: asked }
  - { id: produce, type: io.kestra.plugin.core.debug.Return, format: "rows-{{ execution.id | length }}" }
outputs:
  - { id: value, type: STRING, value: "{{ outputs.produce.value }}" }
`;

const listener = (id: string, trigger: string, extra = '') => `id: ${id}
namespace: ${NS}
${extra}
inputs:
  - { id: value, type: STRING, defaults: none }
  - { id: from, type: STRING, defaults: none }
tasks:
  - { id: echo, type: io.kestra.plugin.core.debug.Return, format: "{{ inputs.value }} from {{ trigger.flowId }}" }
triggers:
  - id: on_upstream
    type: io.kestra.plugin.core.trigger.Flow
    inputs:
      value: "{{ trigger.outputs.value ?? 'no output' }}"
      from: "{{ trigger.executionId }}"
${trigger}
`;

const onA = (states: string[]) => `    conditions:
      - { type: ${C}ExecutionFlowCondition, namespace: ${NS}, flowId: a }
      - { type: ${C}ExecutionStatusCondition, in: [${states.join(', ')}] }`;

let env: Embedded;
let component: TriggerComponent;
const errors: unknown[] = [];
let deps: TriggerServiceDeps;

async function executionsOf(flowId: string): Promise<Execution[]> {
  return (await env.stores.executions.search({ namespace: NS, flowId, limit: 100 })).results;
}


/** Runs an upstream flow to its end. */
async function run(flowId: string, inputs: Record<string, unknown> = {}): Promise<Execution> {
  const created = await env.execute(NS, flowId, 'create', inputs);
  return env.waitFor(created.id, (e) => TERMINAL.includes(e?.state?.current));
}

/** The execution of `flowId` started by upstream execution `upstreamId`, once it exists. */
const triggeredBy = (flowId: string, upstreamId: string) => waitUntil(async () =>
  (await executionsOf(flowId)).find((e) => e.trigger?.variables?.executionId === upstreamId), `${flowId} triggered by ${upstreamId}`);

const countTriggeredBy = async (flowId: string, upstreamId: string) =>
  (await executionsOf(flowId)).filter((e) => e.trigger?.variables?.executionId === upstreamId).length;

/** stop() handles everything queued; start() catches up on what ended meanwhile. */
async function restart(): Promise<void> {
  await component.stop();
  component = createFlowTriggerComponent({ checkpointEveryMs: 0 });
  await component.start(deps);
}

beforeAll(async () => {
  env = await startEmbedded();
  deps = {
    stores: env.stores, renderer: createSecretRenderer(env.stores, {}), clock: () => new Date(), env: {},
    onError: (err) => { errors.push(err); },
  };
  await env.createFlow(upstream('a'));
  await env.createFlow(upstream('u2'));
  await env.createFlow(listener('b', onA(['SUCCESS'])));
  await env.createFlow(listener('on_fail', onA(['FAILED'])));
  await env.createFlow(listener('off_flow', onA(['SUCCESS']), 'disabled: true'));
  await env.createFlow(listener('off_trigger', `${onA(['SUCCESS'])}\n    disabled: true`));
  await env.createFlow(listener('api_off', onA(['SUCCESS'])));
  await env.stores.triggers.put({ namespace: NS, flowId: 'api_off', triggerId: 'on_upstream', disabled: true, state: {} }, 0);
  await env.createFlow(listener('other', `    conditions:\n      - { type: ${C}ExecutionFlowCondition, namespace: ${NS}, flowId: nope }`));
  await env.createFlow(listener('both', `    preconditions:
      id: both
      flows:
        - { namespace: ${NS}, flowId: a, states: [SUCCESS] }
        - { namespace: ${NS}, flowId: u2 }`));
  await env.createFlow(listener('where_failed', `    preconditions:
      where:
        - id: failed_here
          filters:
            - { field: NAMESPACE, type: EQUAL_TO, value: ${NS} }
            - { field: STATE, type: IN, values: [FAILED, KILLED] }`));
  component = createFlowTriggerComponent({ checkpointEveryMs: 0 });
  await component.start(deps);
}, 60_000);

afterAll(async () => {
  await component?.stop();
  await env?.close();
});

describe('Flow trigger', () => {
  it('A ends → B starts once with inputs rendered from A\'s outputs, and runs', async () => {
    const a = await run('a');
    expect(a.state.current).toBe('SUCCESS');
    const b = await triggeredBy('b', a.id);
    expect(b.inputs).toEqual({ value: a.outputs!.value, from: a.id });
    expect(b.trigger).toMatchObject({ id: 'on_upstream', variables: { namespace: NS, flowId: 'a', state: 'SUCCESS', flowRevision: 1 } });
    const done = await env.waitFor(b.id, (e) => TERMINAL.includes(e?.state?.current));
    expect(done.state.current).toBe('SUCCESS');
    expect(done.taskRunList[0].outputs.value).toBe(`${a.outputs!.value} from a`);
    await restart(); // handled everything A's end caused
    expect(await countTriggeredBy('b', a.id)).toBe(1);
    expect(await countTriggeredBy('on_fail', a.id)).toBe(0); // ExecutionStatusCondition in [FAILED]
    for (const id of ['off_flow', 'off_trigger', 'api_off', 'other', 'where_failed']) expect(await executionsOf(id)).toEqual([]);
  });

  it('conditions filter: a failed A starts on_fail, not b', async () => {
    const a = await run('a', { fail: true });
    expect(a.state.current).toBe('FAILED');
    const f = await triggeredBy('on_fail', a.id);
    expect(f.inputs.from).toBe(a.id);
    expect(f.inputs.value).toBe('no output'); // A failed before producing outputs
    await triggeredBy('where_failed', a.id); // preconditions.where: failed in the namespace
    await restart();
    expect(await countTriggeredBy('b', a.id)).toBe(0);
    expect(await countTriggeredBy('on_fail', a.id)).toBe(1);
    expect(await countTriggeredBy('where_failed', a.id)).toBe(1);
  });

  it('an A that ended while the component was stopped triggers B once it starts, and only once', async () => {
    await component.stop();
    const a = await run('a');
    expect(await countTriggeredBy('b', a.id)).toBe(0);
    component = createFlowTriggerComponent({ checkpointEveryMs: 0 });
    await component.start(deps); // catch-up scan
    expect(await countTriggeredBy('b', a.id)).toBe(1);
    await restart();
    await restart();
    expect(await countTriggeredBy('b', a.id)).toBe(1);
  });

  it('a crash after creating B but before marking A done does not create a second B', async () => {
    await component.stop();
    const a = await run('a');
    // What the crashed process did: B created with the derived id, no done-mark for A.
    const bFlow = (await env.stores.flows.get(NS, 'b'))!;
    const flow = { ...bFlow.flow, revision: bFlow.revision };
    await startTriggeredExecution(env.stores, {
      flow, trigger: flow.triggers![0]!, variables: flowTriggerVariables(a), dedupeKey: a.id, now: new Date(),
    }, deps.renderer);
    expect(await env.stores.triggers.isMarked('flow-trigger', a.id)).toBe(false);
    component = createFlowTriggerComponent({ checkpointEveryMs: 0 });
    await component.start(deps);
    expect(await env.stores.triggers.isMarked('flow-trigger', a.id)).toBe(true);
    expect(await countTriggeredBy('b', a.id)).toBe(1);
  });

  it('preconditions wait for every upstream flow, then fire once and start over', async () => {
    const before = (await executionsOf('both')).length;
    const a = await run('a');
    await restart();
    expect((await executionsOf('both')).length).toBe(before);
    const u = await run('u2');
    const both = await triggeredBy('both', u.id);
    expect(both.trigger?.variables?.flowId).toBe('u2');
    await restart();
    expect((await executionsOf('both')).length).toBe(before + 1);
    expect(await countTriggeredBy('both', a.id)).toBe(0);
  });

  it('a flow without conditions does not trigger itself', async () => {
    await env.createFlow(listener('loop', '    states: [SUCCESS]'));
    const created = await env.execute(NS, 'loop', 'create', {});
    await env.waitFor(created.id, (e) => TERMINAL.includes(e?.state?.current));
    await restart();
    // Other flows' executions ending meanwhile may start it; its own never do.
    expect((await executionsOf('loop')).filter((e) => e.trigger?.variables?.flowId === 'loop')).toEqual([]);
    expect(errors).toEqual([]);
  });

  it('inputs that do not fit the triggered flow create nothing and are reported', async () => {
    await env.createFlow(`id: strict
namespace: ${NS}
inputs:
  - { id: n, type: INT }
tasks:
  - { id: t, type: io.kestra.plugin.core.debug.Return, format: "{{ inputs.n }}" }
triggers:
  - id: on_a
    type: io.kestra.plugin.core.trigger.Flow
    inputs: { n: "{{ trigger.outputs.value }}" }
${onA(['SUCCESS'])}
`);
    errors.length = 0;
    const a = await run('a');
    await triggeredBy('b', a.id);
    await restart();
    expect(await executionsOf('strict')).toEqual([]);
    expect(errors).toHaveLength(1);
    expect((errors[0] as Error).message).toMatch(/inputs\.n: .* is not an integer/);
  });

  it('purges done-marks past the retention; a purged transition is never handled again, even when updated', async () => {
    await component.stop();
    const opts = { checkpointEveryMs: 0, slackMs: 0, markRetentionMs: 1_000, purgeBatch: 2 };
    component = createFlowTriggerComponent(opts);
    await component.start(deps);
    const a = await run('a');
    await triggeredBy('b', a.id);
    await waitUntil(async () => (await env.stores.triggers.isMarked('flow-trigger', a.id)) || undefined, 'the done-mark');
    for (let i = 0; i < 5; i++) await env.stores.triggers.mark('flow-trigger', `old-${i}`); // more than one purge batch
    await new Promise((r) => setTimeout(r, 1_100)); // past the retention
    await component.stop();
    component = createFlowTriggerComponent(opts); // a new instance purges at its first checkpoint
    await component.start(deps);
    await waitUntil(async () => (await env.stores.triggers.isMarked('flow-trigger', a.id)) ? undefined : true, 'the purge');
    await waitUntil(async () => {
      for (let i = 0; i < 5; i++) if (await env.stores.triggers.isMarked('flow-trigger', `old-${i}`)) return undefined;
      return true;
    }, 'every old mark purged, batch after batch');
    // A finished execution updated long after its end (labels set by a user) is not a new transition.
    const stored = (await env.stores.executions.get(a.id))!;
    await env.stores.executions.update({ ...stored.execution, labels: [...(stored.execution.labels ?? []), { key: 'seen', value: 'yes' }] }, stored.resourceVersion);
    const a2 = await run('a'); // handled after the update (one queue): its B proves the update was looked at
    await triggeredBy('b', a2.id);
    await component.stop();
    component = createFlowTriggerComponent(opts); // same settings: the catch-up scan does not reach A either
    await component.start(deps);
    expect(await countTriggeredBy('b', a.id)).toBe(1);
    expect(await env.stores.triggers.isMarked('flow-trigger', a.id)).toBe(false);
  });
});
