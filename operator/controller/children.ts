// Child executions of Subflow and ForEachItem runs: creating them (their ids are decided by the engine, so a retry or a
// recovery finds the one created before) and reporting what they did to the parent's queue. A transient store error
// is thrown for the caller to retry; a permanent one ends the run with the reason (a subflow-error event).
import type { EngineEvent, SubflowRequest } from '../core/engine-types.js';
import { childDepth, failureReason, newExecution } from '../core/execution.js';
import { pendingChildren } from '../core/subflow.js';
import type { Execution, Flow, TaskRun } from '../core/types.js';
import { isTerminal } from '../core/types.js';
import { isTransient, reasonOf } from '../faults.js';
import { resolveInputs } from '../model/index.js';
import type { Stores } from '../store/types.js';
import { fileCallerOf, fileReadDenied } from '../tenancy/files.js';
import type { NamespaceGrants } from '../tenancy/namespaces.js';

/** The batch of a ForEachItem child (its trigger's `taskRunIteration`), undefined for a Subflow's. */
function iterationOf(c: Execution): number | undefined {
  const i = (c.trigger?.variables as Record<string, unknown> | undefined)?.taskRunIteration;
  return typeof i === 'number' && Number.isSafeInteger(i) && i >= 0 ? i : undefined;
}

function endedEvent(taskRunId: string, c: Execution): EngineEvent {
  const error = failureReason(c);
  const iteration = iterationOf(c);
  return {
    type: 'subflow-ended', taskRunId, ...(iteration !== undefined ? { iteration } : {}),
    child: { id: c.id, state: c.state.current, ...(c.outputs ? { outputs: c.outputs } : {}), ...(error ? { error } : {}) },
  };
}

const SUBFLOW_TYPE = 'ai.service.plugin.core.flow.Subflow';

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
    const at = req.iteration !== undefined ? { iteration: req.iteration } : {};
    try {
      const rec = await this.stores.flows.get(req.namespace, req.flowId, req.revision);
      if (!rec) {
        this.push(parent.id, { type: 'subflow-error', taskRunId: req.taskRunId, ...at, error: `Subflow ${req.namespace}.${req.flowId}${req.revision ? ` revision ${req.revision}` : ''} not found` });
        return;
      }
      // A parent hands its child only files it may read itself; the child may then read them as FILE inputs.
      const parentCaller = fileCallerOf(parent, await this.flowOf(parent).catch(() => undefined));
      const inputs = resolveInputs(rec.flow.inputs, req.inputs, { fileUri: (uri) => fileReadDenied(parentCaller, uri, this.grants) });
      child = (await this.stores.executions.create(newExecution({
        id: req.executionId, flow: rec.flow, inputs, labels: req.labels, now: this.clock(), depth: childDepth(parent),
        parent: { executionId: parent.id, taskRunId: req.taskRunId, namespace: parent.namespace, flowId: parent.flowId },
        // Kestra's trigger of a subflow execution: the task that asked, and where (`taskRunIteration`: the batch).
        trigger: {
          id: req.taskId ?? 'subflow', type: req.taskType ?? SUBFLOW_TYPE,
          variables: {
            executionId: parent.id, namespace: parent.namespace, flowId: parent.flowId, flowRevision: parent.flowRevision,
            taskRunId: req.taskRunId, ...(req.taskId ? { taskId: req.taskId } : {}), ...(req.iteration !== undefined ? { taskRunIteration: req.iteration } : {}),
          },
        },
        ...(req.outputs ? { legacyOutputs: req.outputs } : {}),
        ...(req.scheduleDate ? { scheduleDate: req.scheduleDate } : {}),
      }))).execution;
    } catch (err) {
      if (isTransient(err)) throw err;
      this.push(parent.id, { type: 'subflow-error', taskRunId: req.taskRunId, ...at, error: reasonOf(err) });
      return;
    }
    this.report(parent.id, req.taskRunId, child, false, req.iteration);
  }

  /** What the parent hears of a child: ended (which implies created: a child that ended at once is never "only created"), else created. */
  private report(parentId: string, taskRunId: string, child: Execution, knownCreated: boolean, iteration?: number): void {
    if (isTerminal(child.state.current)) this.push(parentId, endedEvent(taskRunId, child));
    else if (!knownCreated) this.push(parentId, { type: 'subflow-created', taskRunId, executionId: child.id, ...(iteration !== undefined ? { iteration } : {}) });
  }

  /** Recovery of a Subflow/ForEachItem run: create each child the crash came before, else report what it did. */
  async check(parent: Execution, run: TaskRun): Promise<void> {
    for (const { slot, executionId, iteration } of pendingChildren(run)) {
      const child = await this.stores.executions.get(executionId);
      if (!child) {
        if (slot.request) {
          let req: SubflowRequest;
          try { req = this.keptRequest(parent, run, slot.request, iteration); } catch (err) {
            this.push(parent.id, { type: 'subflow-error', taskRunId: run.id, ...(iteration !== undefined ? { iteration } : {}), error: reasonOf(err) });
            continue;
          }
          await this.create(parent, req);
        }
        else this.push(parent.id, { type: 'subflow-error', taskRunId: run.id, ...(iteration !== undefined ? { iteration } : {}), error: `Subflow execution ${executionId} was lost` });
        continue;
      }
      // Only news is pushed: a resync of a parent waiting on a running child then costs no write.
      this.report(parent.id, run.id, child.execution, slot.created === true, iteration);
    }
  }

  /**
   * A request as the parent's run kept it, its inputs opened: the masking layer sealed those holding a secret
   * (SecretLayer.sealRequestInputs). Throws when a sealed text does not open (another ENCRYPTION_KEY): the run fails.
   */
  private keptRequest(parent: Execution, run: TaskRun, req: SubflowRequest, iteration: number | undefined): SubflowRequest {
    const layer = this.stores.secrets;
    if (!layer || req.inputs === undefined) return req;
    return { ...req, inputs: layer.openRequestInputs(parent.id, run.id, iteration, req.inputs) as SubflowRequest['inputs'] };
  }

  /** A child ended: its parent hears of it. */
  ended(child: Execution): void {
    if (child.parent) this.push(child.parent.executionId, endedEvent(child.parent.taskRunId, child));
  }
}
