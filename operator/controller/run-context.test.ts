// The run context creates a task's working directory only when the task asks for it, and shares a
// WorkingDirectory ancestor's directory (seeded with its inputFiles: working-directory.ts) with the children. Building the contexts of every
// child of a fan-out costs per child the same at 2,000 and 20,000 children (the record is indexed once, not per attempt).
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { taskForRun } from '../core/runs.js';
import { newExecution } from '../core/execution.js';
import type { TaskRun } from '../core/types.js';
import { parseFlow } from '../model/index.js';
import { openEmbeddedStores, type EmbeddedStores } from '../store/sqlite/index.js';
import { tempDir } from '../store/sqlite/test-fixtures.js';
import { buildRunContext, callsErrorLogs, readErrorLogs } from './run-context.js';
import { createSecretRenderer } from './secrets.js';
import { seedSharedWorkingDir, sharedWorkingDirOf } from './working-directory.js';

let stores: EmbeddedStores | undefined;
let tmp: ReturnType<typeof tempDir> | undefined;
afterEach(async () => { await stores?.close(); tmp?.remove(); });

const run = (id: string, taskId: string, parent?: string): TaskRun => ({
  id, executionId: 'e1', namespace: 'ns', flowId: 'f', taskId, ...(parent ? { parentTaskRunId: parent } : {}),
  state: { current: 'RUNNING', histories: [], startDate: new Date().toISOString() }, attempts: [],
});

it('creates the working directory on first use, shared under a WorkingDirectory', async () => {
  tmp = tempDir();
  stores = openEmbeddedStores(tmp.dir);
  const flow = { ...parseFlow(`id: f\nnamespace: ns\ntasks:\n  - id: r\n    type: ai.service.plugin.core.debug.Return\n    format: x\n  - id: wd\n    type: ai.service.plugin.core.flow.WorkingDirectory\n    inputFiles:\n      seed.txt: "from {{ flow.id }}"\n    tasks:\n      - id: child\n        type: ai.service.plugin.core.debug.Return\n        format: y\n`), revision: 1 };
  const exec = { ...newExecution({ id: 'e1', flow, inputs: {}, now: new Date() }), taskRunList: [run('r1', 'r'), run('w1', 'wd'), run('c1', 'child', 'w1')] };
  const make = (r: TaskRun) => buildRunContext({
    flow, exec, run: r, task: flow.tasks.find((t) => t.id === r.taskId) ?? { id: r.taskId, type: 'x' }, attempt: 1, stores: stores!,
    renderer: createSecretRenderer(stores!, {}), workRoot: join(tmp!.dir, 'work'), signal: new AbortController().signal,
  });
  const own = make(exec.taskRunList[0]!);
  const path = own.variables.workingDir as string;
  expect(existsSync(path)).toBe(false);
  expect(own.workingDir).toBe(path);
  expect(existsSync(path)).toBe(true);
  const child = make(exec.taskRunList[2]!);
  expect(await seedSharedWorkingDir(child, sharedWorkingDirOf(flow, exec, exec.taskRunList[2]!, join(tmp.dir, 'work'))!)).toBe(true);
  expect(child.workingDir).toBe(join(tmp.dir, 'work', 'e1', 'w1'));
  expect(readFileSync(join(child.workingDir, 'seed.txt'), 'utf8')).toBe('from f');
});

it('contexts of a fan-out\'s children cost per child the same at 2,000 and 20,000 children', () => {
  tmp = tempDir();
  stores = openEmbeddedStores(tmp.dir);
  const flow = { ...parseFlow(`id: f\nnamespace: ns\ntasks:\n  - id: each\n    type: ai.service.plugin.core.flow.EachParallel\n    value: "[]"\n    tasks:\n      - id: r\n        type: ai.service.plugin.core.debug.Return\n        format: "{{ outputs.r[taskrun.value].value }}"\n`), revision: 1 };
  const renderer = createSecretRenderer(stores, {});
  const signal = new AbortController().signal;
  const perChild = (n: number): number => {
    const children = Array.from({ length: n }, (_, i) => ({ ...run(`c${i}`, 'r', 'p'), value: String(i), outputs: { value: `v${i}` } }));
    const exec = { ...newExecution({ id: 'e1', flow, inputs: {}, now: new Date() }), taskRunList: [run('p', 'each'), ...children] };
    const t0 = performance.now();
    for (const child of children) {
      const ctx = buildRunContext({ flow, exec, run: child, task: taskForRun(flow, exec, child), attempt: 1, stores: stores!, renderer, workRoot: tmp!.dir, signal });
      expect(ctx.render('{{ outputs.r[taskrun.value].value }}')).toBe(`v${child.value}`);
    }
    return (performance.now() - t0) / n;
  };
  perChild(500); // warm-up (JIT)
  const small = Math.min(perChild(2_000), perChild(2_000));
  const large = Math.min(perChild(20_000), perChild(20_000));
  expect(large / small, `${small.toFixed(4)} ms per child at 2,000, ${large.toFixed(4)} at 20,000`).toBeLessThan(4);
}, 120_000);

it("file functions see the task's files through read()'s rules; errorLogs() gives the execution's ERROR lines", async () => {
  tmp = tempDir();
  stores = openEmbeddedStores(tmp.dir);
  const flow = { ...parseFlow('id: f\nnamespace: ns\ntasks:\n  - id: r\n    type: ai.service.plugin.core.debug.Return\n    format: "{{ errorLogs() }}"\n'), revision: 1 };
  const exec = { ...newExecution({ id: 'e1', flow, inputs: {}, now: new Date() }), taskRunList: [run('r1', 'r')] };
  const own = await stores.storage.put('ns/f/executions/e1/tasks/x/y/out.txt', Buffer.from('abc'));
  const foreign = await stores.storage.put('victim/f/executions/v1/tasks/x/y/secret.txt', Buffer.from('s3cret'));
  const line = (level: 'INFO' | 'ERROR', message: string, namespace = 'ns') =>
    ({ executionId: 'e1', namespace, flowId: 'f', taskId: 'boom', taskRunId: 'b1', attemptNumber: 1, level, message, timestamp: new Date().toISOString() });
  stores.logs.append([line('INFO', 'fine'), line('ERROR', 'it broke'), line('ERROR', 'not mine', 'victim')]);
  const task = flow.tasks[0]!;
  expect(callsErrorLogs(flow, task)).toBe(true);
  const ctx = buildRunContext({
    flow, exec, run: exec.taskRunList[0]!, task, attempt: 1, stores, renderer: createSecretRenderer(stores, {}),
    workRoot: join(tmp.dir, 'work'), signal: new AbortController().signal, errorLogs: await readErrorLogs(stores, exec, { logsMaxLines: 10 }),
  });
  expect(ctx.render(`{{ fileSize('${own}') }} {{ fileExists('${own}') }} {{ isFileEmpty('${own}') }}`)).toBe('3 true false');
  expect(ctx.render(`{{ fileExists('${own.replace('out.txt', 'none.txt')}') }}`)).toBe('false');
  expect(() => ctx.render(`{{ fileExists('${foreign}') }}`)).toThrow(/is not allowed.*namespace 'victim'/);
  const logs = ctx.renderTyped('{{ errorLogs() }}') as Record<string, unknown>[];
  expect(logs).toHaveLength(1);
  expect(logs[0]).toMatchObject({ message: 'it broke', level: 'ERROR', taskId: 'boom', executionId: 'e1', namespace: 'ns', flowId: 'f' });
  expect(ctx.render("{{ errorLogs()[0].message }}")).toBe('it broke');
});
