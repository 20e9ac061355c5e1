// What a flow's namespaces give its executions (variables, plugin defaults), attached to the flow the controller runs:
// read from the namespace store for every batch, so a change reaches the next step; the flow copy is reused while
// nothing changed, so the engine's per-flow indexes stay warm.
import type { Flow } from '../core/types.js';
import { namespaceContextOf, withNamespaceContext } from '../model/namespaces.js';
import type { NamespaceStore } from '../store/types.js';

export class NamespaceResolver {
  private readonly memo = new WeakMap<Flow, { key: string; flow: Flow }>();

  constructor(private readonly store: Pick<NamespaceStore, 'chain'>) {}

  /** The flow with its namespace context (the flow itself when neither its namespace nor a parent is stored). */
  async resolve(flow: Flow): Promise<Flow> {
    const chain = await this.store.chain(flow.namespace);
    if (chain.length === 0) return flow;
    const key = chain.map((r) => `${r.id}@${r.version}@${r.updated}`).join('|');
    const hit = this.memo.get(flow);
    if (hit?.key === key) return hit.flow;
    const resolved = withNamespaceContext(flow, namespaceContextOf(chain));
    this.memo.set(flow, { key, flow: resolved });
    return resolved;
  }
}
