// The controller's ownership predicate (partitioned operators): two controllers on one store, each owning half of the
// executions, act only on their own (every launch is of an owned execution), and news crossing the halves (a child
// ended, a concurrency slot freed) reaches the owner through the watch feed, not the periodic resync (set to an hour
// here, so the test would time out without it); a concurrency limit holds although both halves own executions of the
// flow. An execution nobody owns waits; recover() takes it over.
import { afterEach, describe, expect, it } from 'vitest';
import type { Execution } from '../core/types.js';
import { initExpressions } from '../expr/index.js';
import { partitionOf } from '../kube/partitioning.js';
import { parseFlow } from '../model/index.js';
import { openEmbeddedStores, type EmbeddedStores } from '../store/sqlite/index.js';
import { tempDir } from '../store/sqlite/test-fixtures.js';
import { namespaceGrantsFromEnv } from '../tenancy/namespaces.js';
import { Controller } from './controller.js';
import { LocalLauncher } from './launcher.js';
import { createSecretRenderer } from './secrets.js';
import { newExecution } from '../core/execution.js';
import { newId } from '../core/ids.js';

const P = 'ai.service.plugin.';
const HOUR = 3_600_000;
let stores: EmbeddedStores | undefined;
let controllers: Controller[] = [];
let tmp: ReturnType<typeof tempDir> | undefined;

afterEach(async () => { for (const c of controllers) await c.stop(); controllers = []; await stores?.close(); tmp?.remove(); });

/** A controller owning what `owns` says, its launches (inline runs included) recorded as [execution id] (the real in-process launcher runs them). */
function controller(owns: (id: string) => boolean, launched: string[], startsFlow?: (namespace: string, flowId: string) => boolean): Controller {
  const c = new Controller(stores!, {
    dataDir: tmp!.dir, resyncIntervalMs: HOUR, owns, ...(startsFlow ? { startsFlow } : {}),
    launcher: (report) => {
      const real = new LocalLauncher({ stores: stores!, renderer: createSecretRenderer(stores!, {}), workRoot: `${tmp!.dir}/work`, report, grants: namespaceGrantsFromEnv({}) });
      const launch = real.launch.bind(real);
      real.launch = (flow, exec, run, attempt) => { launched.push(exec.id); launch(flow, exec, run, attempt); };
      // Pure tasks (Return) run inline, within the batch: those count as launches too.
      const runInline = real.runInline.bind(real);
      real.runInline = (flow, exec, run, attempt) => {
        const outcome = runInline(flow, exec, run, attempt);
        if (outcome) launched.push(exec.id);
        return outcome;
      };
      return real;
    },
  });
  controllers.push(c);
  return c;
}

async function setup(sources: string[]) {
  await initExpressions();
  tmp = tempDir();
  stores = openEmbeddedStores(tmp.dir);
  const flows = [];
  for (const src of sources) flows.push((await stores.flows.save(parseFlow(src), src)).record.flow);
  return flows;
}

async function waitEnd(id: string): Promise<Execution> {
  for (;;) {
    const e = (await stores!.executions.get(id))?.execution;
    if (e && ['SUCCESS', 'FAILED', 'WARNING', 'KILLED', 'CANCELLED'].includes(e.state.current)) return e;
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('controller ownership predicate', { timeout: 60_000 }, () => {
  it('two halves: each launches only its own executions; children, parents and queued executions cross the halves', async () => {
    const [parent, , limited] = await setup([
      `id: parent\nnamespace: own\ntasks:\n  - id: call\n    type: ${P}core.flow.Subflow\n    namespace: own\n    flowId: child\n    wait: true\n    transmitFailed: true\n  - id: after\n    type: ${P}core.debug.Return\n    format: "{{ outputs.call.outputs.o }}"\n`,
      `id: child\nnamespace: own\ntasks:\n  - id: r\n    type: ${P}core.debug.Return\n    format: done\noutputs:\n  - id: o\n    type: STRING\n    value: "{{ outputs.r.value }}"\n`,
      `id: limited\nnamespace: own\nconcurrency:\n  limit: 1\n  behavior: QUEUE\ntasks:\n  - id: r\n    type: ${P}core.debug.Return\n    format: one at a time\n`,
    ]);
    const even = (id: string) => partitionOf(id, 2) === 0;
    const launchedA: string[] = [], launchedB: string[] = [];
    const a = controller(even, launchedA, () => true), b = controller((id) => !even(id), launchedB, () => false);
    await a.start();
    await b.start();
    const ids: string[] = [];
    for (let i = 0; i < 12; i++) {
      const exec = newExecution({ id: newId(), flow: i % 2 ? limited! : parent!, inputs: {}, now: new Date() });
      await stores!.executions.create(exec);
      ids.push(exec.id);
    }
    const ends = await Promise.all(ids.map(waitEnd));
    expect(ends.map((e) => e.state.current)).toEqual(ids.map(() => 'SUCCESS'));
    expect(ends.filter((e) => e.flowId === 'parent').map((e) => e.taskRunList.find((r) => r.taskId === 'after')!.outputs!.value)).toEqual(Array(6).fill('done'));
    // Both halves worked, each on its own only.
    expect(launchedA.length).toBeGreaterThan(0);
    expect(launchedB.length).toBeGreaterThan(0);
    expect(launchedA.filter((id) => !even(id))).toEqual([]);
    expect(launchedB.filter((id) => even(id))).toEqual([]);
    // Children crossed halves too (their ids are random): at least one parent and its child had different owners.
    const children = await Promise.all(ends.filter((e) => e.flowId === 'parent').map((e) => stores!.executions.get(e.taskRunList[0]!.subflowExecutionId!)));
    expect(children.every((c) => c?.execution.state.current === 'SUCCESS')).toBe(true);
    expect(ends.filter((e) => e.flowId === 'parent').some((e) => even(e.id) !== even(e.taskRunList[0]!.subflowExecutionId!))).toBe(true);
  });

  it('a concurrency limit holds across the halves: one controller decides the starts of the flow, the owners run them', async () => {
    const [limited] = await setup([`id: limited\nnamespace: own\nconcurrency:\n  limit: 1\n  behavior: QUEUE\ntasks:\n  - id: w\n    type: ${P}scripts.shell.Commands\n    commands: ["sleep 0.2"]\n`]);
    const even = (id: string) => partitionOf(id, 2) === 0;
    const a = controller(even, [], () => true), b = controller((id) => !even(id), [], () => false);
    await a.start();
    await b.start();
    // A burst: every execution is created before any start decision.
    const execs = Array.from({ length: 8 }, () => newExecution({ id: newId(), flow: limited!, inputs: {}, now: new Date() }));
    for (const e of execs) await stores!.executions.create(e);
    const ends = await Promise.all(execs.map((e) => waitEnd(e.id)));
    expect(ends.map((e) => e.state.current)).toEqual(execs.map(() => 'SUCCESS'));
    expect(new Set(execs.map((e) => even(e.id))).size, 'executions of both halves').toBe(2);
    // Never two RUNNING at once: each run starts after the previous one ended.
    const spans = ends.map((e) => ({ from: e.state.histories.find((h) => h.state === 'RUNNING')!.date, to: e.state.endDate! })).sort((x, y) => x.from.localeCompare(y.from));
    for (let i = 1; i < spans.length; i++) expect(spans[i]!.from >= spans[i - 1]!.to, JSON.stringify(spans)).toBe(true);
  });

  it('an execution nobody owns waits; recover() by its new owner runs it', async () => {
    const [flow] = await setup([`id: f\nnamespace: own\ntasks:\n  - id: r\n    type: ${P}core.debug.Return\n    format: hi\n`]);
    let mine = false;
    const launched: string[] = [];
    const c = controller(() => mine, launched);
    await c.start();
    const exec = newExecution({ id: newId(), flow: flow!, inputs: {}, now: new Date() });
    await stores!.executions.create(exec);
    await new Promise((r) => setImmediate(r));
    await c.whenIdle();
    expect((await stores!.executions.get(exec.id))!.execution.state.current).toBe('CREATED');
    mine = true;
    expect(await c.recover(() => true)).toBe(true);
    expect((await waitEnd(exec.id)).state.current).toBe('SUCCESS');
    expect([...new Set(launched)]).toEqual([exec.id]);
  });
});
