// The embedded controller with the cluster launcher: every runnable task attempt of a flow runs as a Job on the
// Kubernetes API test server (Pods run by the simulated kubelet), sharing the embedded SQLite stores with the
// runners (storage, logs, KV). Outputs flow between tasks, retries create one Job per attempt, a killed execution
// deletes its running Job. The launcher's storage reads and writes and the controller's record writes are logged in
// order (counted around the real stores): each new attempt's input is written beside the record's write, and each
// result is read once.
import { join, resolve } from 'node:path';
import { BatchV1Api, type KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Controller } from '../../operator/controller/controller.js';
import { newExecution } from '../../operator/core/execution.js';
import { newId } from '../../operator/core/ids.js';
import type { Execution } from '../../operator/core/types.js';
import { initExpressions } from '../../operator/expr/index.js';
import { KubeLauncher } from '../../operator/kube/launcher.js';
import { LABELS } from '../../operator/kube/names.js';
import { parseFlow } from '../../operator/model/index.js';
import { openEmbeddedStores, type EmbeddedStores } from '../../operator/store/sqlite/index.js';
import { tempDir } from '../../operator/store/sqlite/test-fixtures.js';
import { startSimulatedKubelet, type SimulatedKubelet } from './kubelet.js';
import { startKubeTestServer, type KubeTestServer } from './test-server/index.js';
import { until } from '../support/wait.js';

const ROOT = resolve(import.meta.dirname, '../..');
const NS = 'controller-kube';
const P = 'ai.service.plugin.';

let server: KubeTestServer;
let kc: KubeConfig;
let kubelet: SimulatedKubelet;
let tmp: ReturnType<typeof tempDir>;
let stores: EmbeddedStores;
let launcher: KubeLauncher;
let controller: Controller;
/** In order: `get <uri>` / `put <path>` of the launcher's storage, `update <execution id> start|end` of the controller's record writes. */
const ops: string[] = [];

/** `target` whose methods named in `logged` log their calls to `ops` (what they do is unchanged). */
function logging<T extends object>(target: T, logged: Record<string, (args: unknown[]) => string>, after?: Record<string, (args: unknown[]) => string>): T {
  return new Proxy(target, {
    get(t, p, r) {
      const v = Reflect.get(t, p, r) as unknown;
      if (typeof v !== 'function') return v;
      const name = String(p);
      if (!logged[name]) return v.bind(t);
      return (...args: unknown[]) => {
        ops.push(logged[name]!(args));
        const out = v.apply(t, args) as Promise<unknown>;
        const end = after?.[name];
        return end ? out.then((x) => { ops.push(end(args)); return x; }) : out;
      };
    },
  });
}

beforeAll(async () => {
  await initExpressions();
  tmp = tempDir('controller-kube-');
  stores = openEmbeddedStores(tmp.dir);
  server = await startKubeTestServer();
  kc = server.kubeConfig();
  kubelet = await startSimulatedKubelet({ kc, namespace: NS, pathMap: { '/app': ROOT } });
  const db = join(tmp.dir, 'store.db');
  const executions = logging(stores.executions, { update: (a) => `update ${(a[0] as Execution).id} start` }, { update: (a) => `update ${(a[0] as Execution).id} end` });
  const storage = logging(stores.storage, { get: (a) => `get ${String(a[0])}`, put: (a) => `put ${String(a[0])}` });
  controller = new Controller(new Proxy(stores, { get: (t, p, r) => (p === 'executions' ? executions : Reflect.get(t, p, r)) }), {
    dataDir: tmp.dir,
    launcher: (report) => (launcher = new KubeLauncher({
      kc, namespace: NS, storage, report,
      settings: { runnerImage: 'flowpilot-runner:test', env: { STORAGE_DIR: stores.storage.root, LOG_DB: db, KV_DB: db }, terminationGracePeriodSeconds: 5 },
    })),
  });
  await launcher.start();
  await controller.start();
});

afterAll(async () => {
  await controller?.stop();
  await launcher?.stop();
  await kubelet?.stop();
  await server?.close();
  await stores?.close();
  tmp?.remove();
});

async function run(source: string): Promise<Execution> {
  const flow = (await stores.flows.save(parseFlow(source), source)).record.flow;
  const exec = newExecution({ id: newId(), flow, inputs: {}, now: new Date() });
  await stores.executions.create(exec);
  return exec;
}


const ended = (id: string) => until(async () => {
  const e = (await stores.executions.get(id))?.execution;
  return e && ['SUCCESS', 'WARNING', 'FAILED', 'KILLED'].includes(e.state.current) ? e : undefined;
}, `execution ${id} to end`);

const jobsOf = async (exec: Execution) =>
  (await kc.makeApiClient(BatchV1Api).listNamespacedJob({ namespace: NS, labelSelector: `${LABELS.executionId}=${exec.id}` })).items;

// Each task attempt starts a runner process in a Pod: on a loaded 2-core CI machine a three-task flow can come close to
// the default 30 s limit, so the test limit is set far above the waits (60 s each).
describe('controller + KubeLauncher', { timeout: 180_000 }, () => {
  it('runs a flow whose tasks pass outputs, logs and KV values through Jobs', async () => {
    const exec = await run(`id: pipeline\nnamespace: company.kube\ntasks:
  - id: produce
    type: ${P}scripts.shell.Commands
    commands:
      - echo '::{"outputs":{"answer":42}}::'
  - id: use
    type: ${P}core.log.Log
    message: "got {{ outputs.produce.vars.answer }}"
  - id: remember
    type: ${P}core.kv.Set
    key: answer
    value: "{{ outputs.produce.vars.answer }}"
`);
    const done = await ended(exec.id);
    expect(done.state.current, JSON.stringify(done.taskRunList.map((r) => [r.taskId, r.state.current, r.outputs]))).toBe('SUCCESS');
    expect(done.taskRunList.find((r) => r.taskId === 'produce')?.outputs).toMatchObject({ vars: { answer: 42 } });
    expect((await stores.logs.forExecution(exec.id)).map((l) => l.message)).toContain('got 42');
    expect((await stores.kv.get('company.kube', 'answer'))?.value).toBe(42);
    expect((await jobsOf(exec)).map((j) => j.metadata?.labels?.[LABELS.attempt])).toEqual(['1', '1', '1']);
    // Per attempt: one read of its result (none for an earlier result: a new attempt has none), one write of its
    // input, issued before the record's write that starts the attempt (so both travel together), never after it.
    const mine = ops.filter((o) => o.includes(exec.id));
    expect(mine.filter((o) => o.startsWith('get ') && o.endsWith('/result.json'))).toHaveLength(3);
    const inputs = mine.flatMap((o, i) => (o.startsWith('put ') && o.endsWith('/input.json') ? [i] : []));
    expect(inputs).toHaveLength(3);
    for (const i of inputs) expect(mine[i + 1], mine.join('\n')).toBe(`update ${exec.id} start`);
  });

  it('retries a failed task in a new Job per attempt', async () => {
    const marker = join(tmp.dir, 'second-try');
    const exec = await run(`id: retry\nnamespace: company.kube\ntasks:
  - id: flaky
    type: ${P}scripts.shell.Commands
    retry:
      type: constant
      interval: PT0.1S
      maxAttempt: 3
    commands:
      - if [ -e ${marker} ]; then echo ok; else touch ${marker}; exit 1; fi
`);
    const done = await ended(exec.id);
    expect(done.state.current).toBe('SUCCESS');
    expect(done.taskRunList[0]?.attempts.map((a) => a.state.current)).toEqual(['FAILED', 'SUCCESS']);
    expect((await jobsOf(exec)).map((j) => j.metadata?.labels?.[LABELS.attempt]).sort()).toEqual(['1', '2']);
    const mine = ops.filter((o) => o.includes(exec.id));
    expect(mine.filter((o) => o.startsWith('get ') && o.endsWith('/result.json'))).toHaveLength(2);
    expect(mine.filter((o) => o.startsWith('put ') && o.endsWith('/input.json'))).toHaveLength(2);
  });

  it('kills a running execution: its Job is deleted and the execution ends KILLED', async () => {
    const exec = await run(`id: long\nnamespace: company.kube\ntasks:\n  - id: sleep\n    type: ${P}scripts.shell.Commands\n    commands:\n      - echo started\n      - sleep 60\n`);
    await until(async () => ((await stores.logs.forExecution(exec.id)).some((l) => l.message.includes('started')) ? true : undefined), 'the task to start');
    await stores.executions.addCommand(exec.id, { type: 'kill' });
    const done = await ended(exec.id);
    expect(done.state.current).toBe('KILLED');
    await until(async () => ((await jobsOf(exec)).length === 0 ? true : undefined), 'the Job to be deleted');
  });
});
