// Child executions of Subflow and ForEachItem runs: creating them (their ids are decided by the engine, so a retry or a
// recovery finds the one created before) and reporting what they did to the parent's queue. A transient store error
// is thrown for the caller to retry; a permanent one ends the run with the reason (a subflow-error event).
import type { EngineEvent, SubflowRequest } from '../core/engine-types.js';
import { childDepth, newExecution } from '../core/execution.js';
import type { Execution, Flow, TaskRun } from '../core/types.js';
import { isTerminal } from '../core/types.js';
import { isTransient, reasonOf } from '../faults.js';
import { resolveInputs } from '../model/index.js';
import type { Stores } from '../store/types.js';
import { fileCallerOf, fileReadDenied } from '../tenancy/files.js';
import type { NamespaceGrants } from '../tenancy/namespaces.js';

const endedEvent = (taskRunId: string, c: Execution): EngineEvent =>
  ({ type: 'subflow-ended', taskRunId, child: { id: c.id, state: c.state.current, ...(c.outputs ? { outputs: c.outputs } : {}) } });

export class Children {
  constructor(
    private readonly stores: Stores,
    private readonly clock: () => Date,
    private readonly push: (executionId: string, event: EngineEvent) => void,
    /** Namespaces flows may reach beyond their own (ALLOWED_NAMESPACES): what a parent may hand its child. */
    private readonly grants: NamespaceGrants,
    /** The parent's flow revision (which of its inputs are files it holds). */
    private readonly flowOf: (exec: Execution) => Promise<Flow>,
  ) {}

  async create(parent: Execution, req: SubflowRequest): Promise<void> {
    let child: Execution;
    try {
      const rec = await this.stores.flows.get(req.namespace, req.flowId, req.revision);
      if (!rec) {
        this.push(parent.id, { type: 'subflow-error', taskRunId: req.taskRunId, error: `Subflow ${req.namespace}.${req.flowId}${req.revision ? ` revision ${req.revision}` : ''} not found` });
        return;
      }
      // A parent hands its child only files it may read itself; the child may then read them as FILE inputs.
      const parentCaller = fileCallerOf(parent, await this.flowOf(parent).catch(() => undefined));
      const inputs = resolveInputs(rec.flow.inputs, req.inputs, { fileUri: (uri) => fileReadDenied(parentCaller, uri, this.grants) });
      child = (await this.stores.executions.create(newExecution({
        id: req.executionId, flow: rec.flow, inputs, labels: req.labels, now: this.clock(), depth: childDepth(parent),
        parent: { executionId: parent.id, taskRunId: req.taskRunId, namespace: parent.namespace, flowId: parent.flowId },
        trigger: { id: 'subflow', type: 'ai.service.plugin.core.flow.Subflow', variables: { executionId: parent.id, namespace: parent.namespace, flowId: parent.flowId, flowRevision: parent.flowRevision } },
      }))).execution;
    } catch (err) {
      if (isTransient(err)) throw err;
      this.push(parent.id, { type: 'subflow-error', taskRunId: req.taskRunId, error: reasonOf(err) });
      return;
    }
    this.push(parent.id, { type: 'subflow-created', taskRunId: req.taskRunId, executionId: child.id });
    if (isTerminal(child.state.current)) this.push(parent.id, endedEvent(req.taskRunId, child));
  }

  /** Recovery of a Subflow/ForEachItem run: create its child if the crash came before, else report what it did. */
  async check(parent: Execution, run: TaskRun): Promise<void> {
    const childId = run.subflowExecutionId!;
    const child = await this.stores.executions.get(childId);
    if (!child) {
      const request = run.flowableState?.request as SubflowRequest | undefined;
      if (request) await this.create(parent, request);
      else this.push(parent.id, { type: 'subflow-error', taskRunId: run.id, error: `Subflow execution ${childId} was lost` });
      return;
    }
    // Only news is pushed: a resync of a parent waiting on a running child then costs no write.
    if (!run.flowableState?.created) this.push(parent.id, { type: 'subflow-created', taskRunId: run.id, executionId: childId });
    if (isTerminal(child.execution.state.current)) this.push(parent.id, endedEvent(run.id, child.execution));
  }

  /** A child ended: its parent hears of it. */
  ended(child: Execution): void {
    if (child.parent) this.push(child.parent.executionId, endedEvent(child.parent.taskRunId, child));
  }
}
