// Test fixtures for the cluster launcher and the runner: a parsed flow, an execution with one RUNNING task run of a
// chosen task, ready to launch as attempt 1 (what the engine hands a launcher).
import { newExecution } from '../../operator/core/execution.js';
import { newId } from '../../operator/core/ids.js';
import type { Execution, Flow, TaskRun } from '../../operator/core/types.js';
import { parseFlow } from '../../operator/model/index.js';

export interface Attempt { flow: Flow; exec: Execution; run: TaskRun }

/** `yaml` is a whole flow; the task run is for `taskId` (default: the first task). */
export function attemptOf(yaml: string, taskId?: string): Attempt {
  const flow = { ...parseFlow(yaml), revision: 1 };
  const now = new Date();
  const base = newExecution({ id: newId(), flow, inputs: {}, now });
  const tid = taskId ?? flow.tasks[0]!.id;
  const run: TaskRun = {
    id: newId(), executionId: base.id, namespace: flow.namespace, flowId: flow.id, taskId: tid,
    state: { current: 'RUNNING', histories: [{ state: 'RUNNING', date: now.toISOString() }], startDate: now.toISOString() },
    attempts: [{ state: { current: 'RUNNING', histories: [{ state: 'RUNNING', date: now.toISOString() }], startDate: now.toISOString() } }],
  };
  const exec: Execution = { ...base, state: { ...base.state, current: 'RUNNING' }, taskRunList: [run] };
  return { flow, exec, run };
}

/** A one-task flow in namespace `company.team`. */
export function oneTask(taskYaml: string, id = 'kube-test'): Attempt {
  const body = taskYaml.split('\n').map((l) => (l ? `    ${l}` : l)).join('\n');
  return attemptOf(`id: ${id}\nnamespace: company.team\ntasks:\n  - ${body.trimStart()}\n`);
}
