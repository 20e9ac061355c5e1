// Recovery of the controller from records alone: work the engine decided but nobody carried out before a crash
// (a child execution never created, an attempt never launched, a retry timer never armed) is done after a restart.
import { afterEach, describe, expect, it } from 'vitest';
import { step } from '../core/engine.js';
import { newExecution } from '../core/execution.js';
import { batchFileName, SPLITS_FILE } from '../core/foreach-item.js';
import { newId } from '../core/ids.js';
import type { Execution } from '../core/types.js';
import { createRenderer, initExpressions } from '../expr/index.js';
import { parseFlow } from '../model/index.js';
import { openEmbeddedStores, type EmbeddedStores } from '../store/sqlite/index.js';
import { tempDir } from '../store/sqlite/test-fixtures.js';
import { taskRunStoragePath } from '../storage/paths.js';
import { startController, type Controller } from './controller.js';

const P = 'ai.service.plugin.';
let stores: EmbeddedStores | undefined;
let controller: Controller | undefined;
let tmp: ReturnType<typeof tempDir> | undefined;

afterEach(async () => { await controller?.stop(); await stores?.close(); tmp?.remove(); });

async function setup(sources: string[]) {
  await initExpressions();
  tmp = tempDir();
  stores = openEmbeddedStores(tmp.dir);
  const flows = [];
  for (const src of sources) flows.push((await stores.flows.save(parseFlow(src), src)).record.flow);
  return flows;
}

/** Runs the engine's start step and stores the result without carrying out its actions: a crash right after the write. */
async function startedButCrashed(flow: Parameters<typeof step>[0]): Promise<Execution> {
  const exec = newExecution({ id: newId(), flow, inputs: {}, now: new Date() });
  await stores!.executions.create(exec);
  const r = step(flow, exec, { type: 'start', runningCount: 0 }, { now: new Date(), newId, random: Math.random, renderer: createRenderer() });
  await stores!.executions.update(r.execution, 1);
  return r.execution;
}

async function waitEnd(id: string): Promise<Execution> {
  for (let i = 0; i < 400; i++) {
    const e = (await stores!.executions.get(id))!.execution;
    if (['SUCCESS', 'FAILED', 'WARNING', 'KILLED'].includes(e.state.current)) return e;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error('execution did not end');
}

describe('controller recovery', () => {
  it('creates a child execution that was requested but never created', async () => {
    const [parent] = await setup([
      `id: parent\nnamespace: rec\ntasks:\n  - id: call\n    type: ${P}core.flow.Subflow\n    namespace: rec\n    flowId: child\n    wait: true\n    transmitFailed: true\n`,
      `id: child\nnamespace: rec\ntasks:\n  - id: r\n    type: ${P}core.debug.Return\n    format: done\noutputs:\n  - id: o\n    type: STRING\n    value: "{{ outputs.r.value }}"\n`,
    ]);
    const exec = await startedButCrashed(parent!);
    const childId = exec.taskRunList[0]!.subflowExecutionId!;
    expect(await stores!.executions.get(childId)).toBeUndefined();
    controller = await startController(stores!, { dataDir: tmp!.dir });
    const done = await waitEnd(exec.id);
    expect(done.state.current).toBe('SUCCESS');
    expect(done.taskRunList[0]!.outputs).toMatchObject({ executionId: childId, outputs: { o: 'done' } });
    expect((await stores!.executions.search({ namespace: 'rec', flowId: 'child' })).total).toBe(1);
  });

  it('creates the batch executions of a ForEachItem that were requested but never created', async () => {
    const [parent] = await setup([
      `id: parent\nnamespace: rec\ntasks:\n  - id: each\n    type: ${P}core.flow.ForEachItem\n    items: "kestra:///unused"\n    namespace: rec\n    flowId: child\n`
        + `    inputs:\n      line: "{{ taskrun.iteration }}"\n`,
      `id: child\nnamespace: rec\ninputs:\n  - id: line\n    type: STRING\ntasks:\n  - id: r\n    type: ${P}core.debug.Return\n    format: "{{ inputs.line }}"\n`
        + `outputs:\n  - id: o\n    type: STRING\n    value: "{{ outputs.r.value }}"\n`,
    ]);
    const deps = { now: new Date(), newId, random: Math.random, renderer: createRenderer() };
    const exec = await startedButCrashed(parent!);
    const split = exec.taskRunList.find((r) => r.taskId === 'each_split')!;
    // The split ran (its batch files are in storage), then the step that asked for the children was stored, and the crash came.
    const prefix = taskRunStoragePath(exec, split.taskId, split.id);
    await stores!.storage.put(`${prefix}/${batchFileName(0)}`, Buffer.from('first\n'));
    await stores!.storage.put(`${prefix}/${batchFileName(1)}`, Buffer.from('second\n'));
    const splits = await stores!.storage.put(`${prefix}/${SPLITS_FILE}`, Buffer.from('two batches'));
    const r = step(parent!, exec, { type: 'task-result', taskRunId: split.id, attempt: 1, outcome: { state: 'SUCCESS', outputs: { splits, numberOfBatches: 2 } } }, deps);
    expect(r.actions.filter((a) => a.type === 'create-subflow')).toHaveLength(2);
    await stores!.executions.update(r.execution, 2);
    controller = await startController(stores!, { dataDir: tmp!.dir });
    const done = await waitEnd(exec.id);
    expect(done.state.current).toBe('SUCCESS');
    expect(done.taskRunList.find((x) => x.taskId === 'each_items')!.outputs).toEqual({ numberOfBatches: 2, iterations: { CREATED: 0, RUNNING: 0, SUCCESS: 2 } });
    const children = (await stores!.executions.search({ namespace: 'rec', flowId: 'child' })).results;
    expect(children.map((c) => [c.trigger?.variables?.taskRunIteration, c.outputs?.o]).sort()).toEqual([[0, '0'], [1, '1']]);
  });

  it('launches an attempt that was recorded as running but never launched', async () => {
    const [flow] = await setup([`id: f\nnamespace: rec\ntasks:\n  - id: a\n    type: ${P}core.debug.Return\n    format: "{{ taskrun.attemptsCount }}"\n`]);
    const exec = await startedButCrashed(flow!);
    controller = await startController(stores!, { dataDir: tmp!.dir });
    const done = await waitEnd(exec.id);
    expect(done.state.current).toBe('SUCCESS');
    expect(done.taskRunList).toHaveLength(1);
    expect(done.taskRunList[0]!.attempts).toHaveLength(1);
  });
});
