// The embedded controller (in-process launcher) on the cluster stores, with the API as a second process on the same
// Kubernetes API test server: executions created by the API run to the end, resume and kill commands sent by the API
// reach the controller through the informer and are acknowledged, and a subflow runs as a second Execution resource.
// kubectl-made resources: a Flow using Kestra's old `taskDefaults` (kept by the CRD schema) run by an Execution without
// a revision, which records the revision it runs in status.flowRevision (the REVISION column).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Controller } from '../../controller/controller.js';
import { newExecution } from '../../core/execution.js';
import { newId } from '../../core/ids.js';
import type { Execution } from '../../core/types.js';
import { initExpressions } from '../../expr/index.js';
import { parseFlow } from '../../model/index.js';
import { tempDir } from '../../store/sqlite/test-fixtures.js';
import type { KubeStores } from './index.js';
import { buildCrds } from '../crds.js';
import { type StoreHarness, crd, startStoreHarness, until } from './test-support.js';

const P = 'ai.service.plugin.';
let h: StoreHarness;
let api: KubeStores;
let controller: Controller;
let work: ReturnType<typeof tempDir>;

beforeAll(async () => {
  await initExpressions();
  h = await startStoreHarness();
  api = await h.openPeer();
  work = tempDir('controller-kube-store-');
  controller = new Controller(h.stores, { dataDir: work.dir });
  await controller.start();
});

afterAll(async () => {
  await controller?.stop();
  await h?.close();
  work?.remove();
});

/** The API process saves the flow and creates the execution. */
async function start(source: string): Promise<Execution> {
  const flow = (await api.flows.save(parseFlow(source), source)).record.flow;
  const exec = newExecution({ id: newId(), flow, inputs: {}, now: new Date() });
  await api.executions.create(exec);
  return exec;
}

const stateIs = (id: string, ...states: string[]) => until(async () => {
  const e = (await api.executions.get(id))?.execution;
  return e && states.includes(e.state.current) ? e : undefined;
}, `execution ${id} in ${states.join('/')}`, 30_000);

// Up to five waits of 30 s each in one test: the test limit sits well above them for a loaded 2-core CI machine.
describe('controller on the cluster stores', { timeout: 180_000 }, () => {
  it('runs an execution the API created to SUCCESS', async () => {
    const exec = await start(`id: hello\nnamespace: company.kube\ntasks:\n  - id: a\n    type: ${P}core.log.Log\n    message: one\n  - id: b\n    type: ${P}core.log.Log\n    message: two\n`);
    const done = await stateIs(exec.id, 'SUCCESS', 'FAILED');
    expect(done.state.current).toBe('SUCCESS');
    expect(done.taskRunList.map((r) => [r.taskId, r.state.current])).toEqual([['a', 'SUCCESS'], ['b', 'SUCCESS']]);
  });

  it('resumes a paused execution and kills another through commands sent by the API process', async () => {
    const source = `id: gate\nnamespace: company.kube\ntasks:\n  - id: wait\n    type: ${P}core.flow.Pause\n  - id: after\n    type: ${P}core.log.Log\n    message: resumed\n`;
    const resumed = await start(source);
    const killed = await start(source);
    await stateIs(resumed.id, 'PAUSED');
    await stateIs(killed.id, 'PAUSED');
    await api.executions.addCommand(resumed.id, { type: 'resume' });
    await api.executions.addCommand(killed.id, { type: 'kill' });
    expect((await stateIs(resumed.id, 'SUCCESS', 'FAILED')).state.current).toBe('SUCCESS');
    expect((await stateIs(killed.id, 'KILLED', 'FAILED')).state.current).toBe('KILLED');
    await until(async () => (await api.executions.pendingCommands()).length === 0, 'the commands to be acknowledged');
  });

  it('runs a subflow as a second Execution resource linked to its parent', async () => {
    await start(`id: child\nnamespace: company.kube\ntasks:\n  - id: c\n    type: ${P}core.log.Log\n    message: child\n`);
    const parent = await start(`id: parent\nnamespace: company.kube\ntasks:\n  - id: call\n    type: ${P}core.flow.Subflow\n    namespace: company.kube\n    flowId: child\n    wait: true\n`);
    const done = await stateIs(parent.id, 'SUCCESS', 'FAILED');
    expect(done.state.current).toBe('SUCCESS');
    const children = (await api.executions.search({ flowId: 'child' })).results.filter((e) => e.parent?.executionId === parent.id);
    expect(children.map((c) => c.state.current)).toEqual(['SUCCESS']);
  });
  it('runs a kubectl-made Flow using taskDefaults (not pruned) from a kubectl-made Execution, recording status.flowRevision', async () => {
    const flowBody = {
      apiVersion: 'flowpilot.io/v1', kind: 'Flow', metadata: { name: 'legacy-defaults' },
      spec: {
        id: 'legacy', namespace: 'company.kube', notAField: 'pruned like any unknown field',
        // The Log task has no message of its own: only the defaults make the flow valid.
        taskDefaults: [{ type: `${P}core.log.Log`, values: { message: 'from taskDefaults' } }],
        tasks: [{ id: 'l', type: `${P}core.log.Log` }],
      },
    };
    const stored: any = await h.co.createNamespacedCustomObject({ ...crd('flows'), body: flowBody });
    expect(stored.spec.taskDefaults).toEqual(flowBody.spec.taskDefaults);
    expect(stored.spec.notAField).toBeUndefined();
    await h.co.createNamespacedCustomObject({ ...crd('executions'), body: { apiVersion: 'flowpilot.io/v1', kind: 'Execution', metadata: { name: 'legacy-run' }, spec: { namespace: 'company.kube', flowId: 'legacy' } } });
    const done = await stateIs('legacy-run', 'SUCCESS', 'FAILED');
    expect(done.state.current).toBe('SUCCESS');
    expect(done.flowRevision).toBe(1);
    const record = await h.stores.flows.get('company.kube', 'legacy');
    expect(record?.flow.pluginDefaults).toEqual([{ type: `${P}core.log.Log`, values: { message: 'from taskDefaults' } }]);
    const resource: any = await h.co.getNamespacedCustomObject({ ...crd('executions'), name: 'legacy-run' });
    expect(resource.spec.flowRevision).toBeUndefined();
    expect(resource.status.flowRevision).toBe(1);
    const execCrd = buildCrds().find((c) => (c.metadata as { name: string }).name === 'executions.flowpilot.io')!;
    const columns = (execCrd.spec as { versions: { additionalPrinterColumns: { name: string; jsonPath: string }[] }[] }).versions[0]!.additionalPrinterColumns;
    expect(columns.find((c) => c.name === 'REVISION')?.jsonPath).toBe('.status.flowRevision');
  });
});
