// The run context creates a task's working directory only when the task asks for it, and shares a
// WorkingDirectory ancestor's directory (seeded with its inputFiles) with the children.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { newExecution } from '../core/execution.js';
import type { TaskRun } from '../core/types.js';
import { parseFlow } from '../model/index.js';
import { openEmbeddedStores, type EmbeddedStores } from '../store/sqlite/index.js';
import { tempDir } from '../store/sqlite/test-fixtures.js';
import { buildRunContext } from './run-context.js';
import { createSecretRenderer } from './secrets.js';

let stores: EmbeddedStores | undefined;
let tmp: ReturnType<typeof tempDir> | undefined;
afterEach(async () => { await stores?.close(); tmp?.remove(); });

const run = (id: string, taskId: string, parent?: string): TaskRun => ({
  id, executionId: 'e1', namespace: 'ns', flowId: 'f', taskId, ...(parent ? { parentTaskRunId: parent } : {}),
  state: { current: 'RUNNING', histories: [], startDate: new Date().toISOString() }, attempts: [],
});

it('creates the working directory on first use, shared under a WorkingDirectory', () => {
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
  expect(child.workingDir).toBe(join(tmp.dir, 'work', 'e1', 'w1'));
  expect(readFileSync(join(child.workingDir, 'seed.txt'), 'utf8')).toBe('from f');
});
