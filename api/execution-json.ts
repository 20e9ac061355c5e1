// Kestra's Execution JSON from our record: `deleted` (a deleted execution is gone here, so always false), `metadata`
// (ExecutionMetadata: attemptNumber, originalCreatedDate) and the trigger's `type` as written in the flow's source.
import { metadataOf } from '../operator/core/execution.js';
import type { Execution, ExecutionMetadata } from '../operator/core/types.js';
import { withWrittenTypes } from '../operator/model/index.js';
import type { FlowRecord, Stores } from '../operator/store/types.js';

export type ExecutionJson = Execution & {
  deleted: boolean;
  metadata: ExecutionMetadata;
};

/** Kestra's shape of one execution; `flow` (its revision) gives the trigger type as written. */
export function executionJson(e: Execution, flow?: FlowRecord): ExecutionJson {
  const json: ExecutionJson = {
    ...e, deleted: false, metadata: metadataOf(e),
  };
  if (e.trigger && flow) {
    const written = withWrittenTypes(flow.flow, flow.source, `${flow.namespace}\u0000${flow.id}\u0000${flow.revision}`)
      .triggers?.find((t) => t.id === e.trigger!.id);
    if (written) json.trigger = { ...e.trigger, type: written.type };
  }
  return json;
}

/** Kestra's shape of several executions, reading each flow revision a triggered one ran once. */
export async function executionsJson(stores: Pick<Stores, 'flows'>, list: Execution[]): Promise<ExecutionJson[]> {
  const flows = new Map<string, Promise<FlowRecord | undefined>>();
  const flowOf = (e: Execution): Promise<FlowRecord | undefined> | undefined => {
    if (!e.trigger) return undefined;
    const key = `${e.namespace}\u0000${e.flowId}\u0000${e.flowRevision}`;
    let p = flows.get(key);
    if (!p) {
      p = stores.flows.get(e.namespace, e.flowId, e.flowRevision).catch(() => undefined);
      flows.set(key, p);
    }
    return p;
  };
  return Promise.all(list.map(async (e) => executionJson(e, await flowOf(e))));
}
