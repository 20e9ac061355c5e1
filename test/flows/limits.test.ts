// Execution-wide limits end to end through the API and the embedded controller: a flow calling itself (directly:
// refused at save; indirectly or by a templated name: stopped at MAX_SUBFLOW_DEPTH), and a loop over more values than
// MAX_TASK_RUNS_PER_EXECUTION allows (fails at once, no child run created).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type Embedded } from '../support/embedded.js';

const SUBFLOW = 'ai.service.plugin.core.flow.Subflow';
const ENDED = ['SUCCESS', 'WARNING', 'FAILED', 'KILLED', 'CANCELLED'];

const caller = (id: string, namespace: string, target: string) => `id: ${id}
namespace: ${namespace}
tasks:
  - id: call
    type: ${SUBFLOW}
    namespace: ${namespace}
    flowId: "${target}"
    wait: true
    transmitFailed: true
`;

/** Every execution of a namespace once none is running any more (children are created after their parent). */
async function settledExecutions(env: Embedded, namespace: string): Promise<any[]> {
  let last = '';
  for (const end = Date.now() + 30_000; Date.now() < end;) {
    const { body } = await env.json(`/executions/search?namespace=${namespace}&size=100`);
    const all = body.results as any[];
    const key = all.map((e) => `${e.id}:${e.state.current}`).sort().join();
    if (all.length && all.every((e) => ENDED.includes(e.state.current)) && key === last) return all;
    last = key;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`executions of ${namespace} did not settle`);
}

/** The chain root → child → ... by parent link, root first. */
function chain(all: any[]): any[] {
  const out = [all.find((e) => !e.parent)];
  for (let next = out[0]; next; ) {
    next = all.find((e) => e.parent?.executionId === next.id);
    if (next) out.push(next);
  }
  return out;
}

describe('MAX_SUBFLOW_DEPTH (default 10)', () => {
  let env: Embedded;
  beforeAll(async () => { env = await startEmbedded(); });
  afterAll(async () => { await env?.close(); });

  it('a Subflow calling its own flow by name is refused at save (422 naming the field)', async () => {
    const r = await env.json('/flows', { method: 'POST', headers: { 'Content-Type': 'application/x-yaml' }, body: caller('self', 'limits.direct', 'self') });
    expect(r.status).toBe(422);
    expect(r.body.errors).toContainEqual({ path: 'tasks[0].flowId', message: expect.stringContaining('a flow cannot call itself (limits.direct.self)') });
  });

  it('A → B → A ends FAILED at the depth limit: exactly 11 executions, the deepest task run names the setting', async () => {
    await env.createFlow(caller('b', 'limits.indirect', 'a'));
    await env.createFlow(caller('a', 'limits.indirect', 'b'));
    const root = await env.execute('limits.indirect', 'a');
    const all = await settledExecutions(env, 'limits.indirect');
    expect(all).toHaveLength(11);
    const links = chain(all);
    expect(links[0].id).toBe(root.id);
    expect(links.map((e) => e.depth ?? 0)).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(links.map((e) => e.flowId)).toEqual(['a', 'b', 'a', 'b', 'a', 'b', 'a', 'b', 'a', 'b', 'a']);
    expect(all.every((e) => e.state.current === 'FAILED')).toBe(true);
    const deepest = links[10].taskRunList.find((r: any) => r.taskId === 'call');
    expect(deepest.state.current).toBe('FAILED');
    expect(deepest.error).toBe("Subflow 'call' would start an execution of limits.indirect.b at depth 11: over the limit of 10 "
      + '(nesting depth of Subflow and ForEachItem executions under one root execution; setting MAX_SUBFLOW_DEPTH)');
  }, 60_000);
});

describe('limits from the environment', () => {
  let env: Embedded;
  beforeAll(async () => { env = await startEmbedded({ PATH: process.env.PATH, MAX_SUBFLOW_DEPTH: '3', MAX_TASK_RUNS_PER_EXECUTION: '50' }); });
  afterAll(async () => { await env?.close(); });

  it('a templated self-call (checked at run time only) stops at MAX_SUBFLOW_DEPTH=3: 4 executions', async () => {
    await env.createFlow(caller('loop', 'limits.templated', '{{ flow.id }}'));
    await env.execute('limits.templated', 'loop');
    const all = await settledExecutions(env, 'limits.templated');
    expect(all).toHaveLength(4);
    const deepest = chain(all)[3];
    expect(deepest.depth).toBe(3);
    expect(deepest.taskRunList[0].error).toContain("Subflow 'call' would start an execution of limits.templated.loop at depth 4: over the limit of 3");
  }, 60_000);

  it('a loop over more values than MAX_TASK_RUNS_PER_EXECUTION=50 fails at once, creating no child run', async () => {
    await env.createFlow(`id: wide
namespace: limits.runs
tasks:
  - id: each
    type: ai.service.plugin.core.flow.EachParallel
    value: "{{ range(1, 100) }}"
    tasks:
      - id: r
        type: ai.service.plugin.core.debug.Return
        format: "{{ taskrun.value }}"
`);
    const { id } = await env.execute('limits.runs', 'wide');
    const e = await env.waitFor(id, (x) => ENDED.includes(x.state.current));
    expect(e.state.current).toBe('FAILED');
    expect(e.taskRunList).toHaveLength(1);
    expect(e.taskRunList[0].error).toBe("EachParallel 'each' needs at least 100 task runs for its 100 values, beside the 1 of this execution: "
      + 'over the limit of 50 (task runs one execution may hold (loops, parallel branches, DAGs and ForEachItem batches included); setting MAX_TASK_RUNS_PER_EXECUTION)');
  });
});
