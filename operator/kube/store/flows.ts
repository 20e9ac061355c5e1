// FlowStore on Flow resources (one per flow; users may `kubectl apply` their own, any metadata.name) and immutable
// FlowRevision resources (`flowRevisionName(flowName(ns, id), n)`, no ownerReferences so history survives a delete).
// `reconcile` turns a kubectl-applied Flow into a revision and a Ready condition; the operator calls it on changes.
import { isDeepStrictEqual } from 'node:util';
import type { KubeConfig } from '@kubernetes/client-node';
import { stringify as toYaml } from 'yaml';
import type { Flow, PluginDefault } from '../../core/types.js';
import { FlowValidationError, isNamespaceId, validateFlow } from '../../model/index.js';
import { Emitter } from '../../store/sqlite/emitter.js';
import { flowRow, rowMatches } from '../../store/filters.js';
import type { FlowEvent, FlowQuery, FlowRecord, FlowStore, Page } from '../../store/types.js';
import { flowName, flowRevisionName } from '../names.js';
import type { CacheOptions } from './cache.js';
import { inNamespace } from './executions.js';
import {
  type FlowObject, FlowResources, type RevisionObject, flowDocument, flowKey, sameDocument, toRecord,
} from './flow-resources.js';
import { isConflict, retrying } from './kube-api.js';
import { MissReads } from './read-through.js';

/** Full lists of the Flows behind misses start at most this often. */
const LIST_GAP_MS = 200;

export type ReconcileResult = { status: 'skipped' } | { status: 'ready'; revision: number; created: boolean } | { status: 'invalid'; message: string };

export class KubeFlowStore implements FlowStore {
  readonly res: FlowResources;
  private readonly events = new Emitter<FlowEvent>('flow watch');
  /** Revision announced as live per flow key (absent: not live), for SAVED / DELETED events. */
  private readonly announced = new Map<string, number>();
  private chain: Promise<void> = Promise.resolve();
  private readonly queued = new Set<string>();

  /** Direct reads behind cache misses (a flow run right after `kubectl apply`), bounded under hostile input. */
  readonly misses: MissReads;

  /**
   * `inherited`: the plugin defaults a flow of a namespace inherits (its namespace's, then the parents'), which may
   * supply values its validation requires.
   */
  constructor(kc: KubeConfig, namespace: string, opts: CacheOptions = {}, misses = new MissReads(),
    private readonly inherited: (namespace: string) => Promise<PluginDefault[][]> = async () => []) {
    this.res = new FlowResources(kc, namespace, opts);
    this.misses = misses;
    this.res.flows.on((e) => {
      const keys = new Set([e.previous, e.obj].flatMap((o) => (o ? keyOf(o.spec) : [])));
      for (const key of keys) this.recompute(key, e.initial);
      for (const key of keyOf(e.obj.spec)) this.misses.forget(key);
    });
    this.res.revisions.on((e) => { for (const key of keyOf(e.obj.spec)) this.recompute(key, e.initial); });
  }

  async save(flow: Flow, source: string): Promise<{ record: FlowRecord; created: boolean }> {
    await this.res.ready();
    const { rev, created } = await retrying(10, isConflict, async () => {
      const latest = this.res.latest(flow.namespace, flow.id);
      if (latest && latest.spec.source === source && this.res.liveFlow(flow.namespace, flow.id)) return { rev: latest, created: false };
      // The revision first: a reconcile triggered by the spec change below then finds it and adds none.
      const revision = (latest?.spec.revision ?? 0) + 1;
      return { rev: await this.res.createRevision(flow, revision, source), created: true };
    });
    flow.revision = rev.spec.revision;
    const doc = flowDocument(source);
    const live = this.res.liveFlow(flow.namespace, flow.id);
    if (created || !live || !isDeepStrictEqual(live.spec, doc)) {
      const flowObj = await this.res.upsertFlowSpec(flow.namespace, flow.id, doc);
      await this.res.writeStatus(flowObj.metadata.name, flowObj.metadata.generation ?? 1, { revision: rev.spec.revision });
    }
    return { record: toRecord(rev, false), created };
  }

  async get(namespace: string, id: string, revision?: number): Promise<FlowRecord | undefined> {
    await this.res.ready();
    if (revision === undefined) {
      const latest = this.current(namespace, id) ?? (await this.readThrough(namespace, id));
      return latest && toRecord(latest, false);
    }
    const live = this.res.liveFlow(namespace, id) !== undefined;
    let rev: RevisionObject | undefined = this.res.revisionsOf(namespace, id).find((r) => r.spec.revision === revision);
    // Written by another process and not in our cache yet: read it (bounded: see read-through.ts).
    const name = flowRevisionName(flowName(namespace, id), revision);
    rev ??= await this.misses.read(`revision\u0000${name}`, () => this.res.revisions.refresh(name));
    if (!rev || rev.spec.namespace !== namespace || rev.spec.id !== id || rev.spec.revision !== revision) return undefined;
    const newest = this.res.latest(namespace, id);
    return toRecord(rev, !live && newest?.spec.revision === revision);
  }

  async revisions(namespace: string, id: string): Promise<FlowRecord[]> {
    await this.res.ready();
    const live = this.res.liveFlow(namespace, id) !== undefined;
    const all = this.res.revisionsOf(namespace, id);
    return all.map((r, i) => toRecord(r, !live && i === all.length - 1));
  }

  /** Deletes the Flow resource(s) of the flow; revisions stay. False when no live flow existed. */
  async delete(namespace: string, id: string): Promise<boolean> {
    await this.res.ready();
    const wasLive = this.isLive(namespace, id);
    let deleted = false;
    for (const obj of this.res.flows.byIndex('key', flowKey(namespace, id))) {
      const res = await this.res.flowsApi.delete(obj.metadata.name);
      if (res) deleted = true;
      this.res.flows.observeDeleted(res && 'metadata' in res ? res : obj);
    }
    return wasLive && deleted;
  }

  async search(query: FlowQuery): Promise<Page<FlowRecord>> {
    const filters = [...(query.q ? [{ kind: 'q', op: 'EQUALS', value: query.q } as const] : []), ...(query.filters ?? [])];
    const rows = (await this.all()).filter((r) => (!query.namespace || inNamespace(r.namespace, query.namespace))
      && rowMatches(filters, flowRow(r.flow)));
    const offset = query.offset && query.offset > 0 ? Math.floor(query.offset) : 0;
    const end = query.limit !== undefined && query.limit >= 0 ? offset + Math.floor(query.limit) : undefined;
    return { results: rows.slice(offset, end), total: rows.length };
  }

  async all(): Promise<FlowRecord[]> {
    await this.res.ready();
    const out: FlowRecord[] = [];
    const seen = new Set<string>();
    for (const obj of this.res.flows.list()) {
      for (const key of keyOf(obj.spec)) {
        if (seen.has(key)) continue;
        seen.add(key);
        const [namespace, id] = key.split('\u0000') as [string, string];
        const latest = this.isLive(namespace, id) ? this.res.latest(namespace, id) : undefined;
        if (latest) out.push(toRecord(latest, false));
      }
    }
    return out.sort((a, b) => cmp(a.namespace, b.namespace) || cmp(a.id, b.id));
  }

  watch(listener: (event: FlowEvent) => void): () => void {
    return this.events.subscribe(listener);
  }

  /**
   * Brings one Flow resource up to date after a create or an edit (kubectl apply): validates its spec with the
   * engine's validator, saves a new revision when the document differs from the latest one, and writes status
   * (revision, observedGeneration, Ready True, or Ready False with the validation message naming the field).
   */
  async reconcile(name: string): Promise<ReconcileResult> {
    await this.res.ready();
    const obj = this.res.flows.get(name);
    if (!obj || obj.metadata.deletionTimestamp) return { status: 'skipped' };
    const generation = obj.metadata.generation ?? 1;
    if ((obj.status?.observedGeneration ?? 0) >= generation && obj.status?.conditions?.some((c) => c.type === 'Ready')) return { status: 'skipped' };
    const invalid = async (message: string): Promise<ReconcileResult> => {
      await this.res.writeStatus(name, generation, { error: message });
      return { status: 'invalid', message };
    };
    let flow: Flow;
    try {
      const ns = (obj.spec as { namespace?: unknown } | undefined)?.namespace;
      flow = validateFlow(structuredClone(obj.spec), isNamespaceId(ns) ? await this.inherited(ns) : []);
    } catch (err) {
      if (err instanceof FlowValidationError) return invalid(err.message);
      throw err;
    }
    const owner = this.res.liveFlow(flow.namespace, flow.id);
    if (owner && owner.metadata.name !== name) {
      return invalid(`Flow ${flow.namespace}.${flow.id} is already defined by Flow resource '${owner.metadata.name}'`);
    }
    const result = await retrying(10, isConflict, async () => {
      const latest = this.res.latest(flow.namespace, flow.id);
      if (latest && sameDocument(latest, obj.spec)) return { revision: latest.spec.revision, created: false };
      const revision = (latest?.spec.revision ?? 0) + 1;
      await this.res.createRevision(flow, revision, toYaml(obj.spec));
      return { revision, created: true };
    });
    await this.res.writeStatus(name, generation, { revision: result.revision });
    return { status: 'ready', ...result };
  }

  /** Reconciles every Flow whose spec is newer than its status (operator start-up). Returns how many were processed. */
  async ensureRevisions(): Promise<number> {
    await this.res.ready();
    let n = 0;
    for (const obj of this.res.flows.list()) {
      if ((await this.reconcile(obj.metadata.name)).status !== 'skipped') n++;
    }
    return n;
  }

  /** Reconciles Flows on every add/update from now on, one at a time (the operator's Flow controller). */
  reconcileOnChange(onError: (err: unknown) => void = (err) => console.error('[kube-store] flow reconcile failed:', err)): () => void {
    const enqueue = (name: string) => {
      if (this.queued.has(name)) return;
      this.queued.add(name);
      this.chain = this.chain.then(async () => {
        this.queued.delete(name);
        await this.reconcile(name);
      }).catch(onError);
    };
    for (const obj of this.res.flows.list()) enqueue(obj.metadata.name);
    return this.res.flows.on((e) => { if (e.type !== 'deleted') enqueue(e.obj.metadata.name); });
  }

  /** Resolves when queued reconciles are done (tests). */
  async idle(): Promise<void> { await this.chain; }

  /** The latest revision of a live Flow whose status is current, from the caches alone; undefined sends get() to the server. */
  private current(namespace: string, id: string): RevisionObject | undefined {
    const live = this.res.liveFlow(namespace, id);
    const latest = this.res.latest(namespace, id);
    if (!live || !latest) return undefined;
    const status = live.status ?? {};
    if ((status.observedGeneration ?? 0) < (live.metadata.generation ?? 1)) return undefined; // applied, not reconciled yet
    if ((status.revision ?? 0) > latest.spec.revision) return undefined; // its revision is not in our cache yet
    return latest;
  }

  /**
   * A flow the caches do not show as runnable, read from the API server: the Flow resources are listed when none
   * defines (namespace, id) here (Flows have any name and no labels to select them by; misses of all names share one
   * list, at most five a second, and a confirmed miss is remembered for KUBE_READ_MISS_TTL_MS). A Flow that exists but
   * is not reconciled yet (kubectl apply, then at once a run) is reconciled here, exactly as the operator would: its
   * spec is validated and saved as a revision, so it can run at once; an invalid one is not runnable (undefined).
   */
  private async readThrough(namespace: string, id: string): Promise<RevisionObject | undefined> {
    const key = flowKey(namespace, id);
    let live = this.res.liveFlow(namespace, id);
    if (!live) {
      if (this.misses.knownMissing(key)) return undefined;
      const { startedAt } = await this.misses.coalesce('flows', () => this.res.flows.resync(), LIST_GAP_MS);
      live = this.res.liveFlow(namespace, id);
      if (!live) {
        this.misses.remember(key, startedAt);
        return undefined;
      }
    }
    const status = live.status ?? {};
    if ((status.observedGeneration ?? 0) < (live.metadata.generation ?? 1)) {
      const result = await this.misses.coalesce(`reconcile\u0000${live.metadata.name}`, () => this.reconcile(live!.metadata.name));
      if (result.value.status === 'invalid') return this.current(namespace, id);
      live = this.res.liveFlow(namespace, id) ?? live;
    }
    const wanted = live.status?.revision ?? 0;
    if (wanted > (this.res.latest(namespace, id)?.spec.revision ?? 0)) {
      const name = flowRevisionName(flowName(namespace, id), wanted);
      await this.misses.read(`revision\u0000${name}`, () => this.res.revisions.refresh(name));
    }
    return this.isLive(namespace, id) ? this.res.latest(namespace, id) : undefined;
  }

  private isLive(namespace: string, id: string): boolean {
    return this.res.liveFlow(namespace, id) !== undefined && this.res.latest(namespace, id) !== undefined;
  }

  /** SAVED when the live revision of a flow changes, DELETED when it stops being live; silent for the initial lists. */
  private recompute(key: string, initial: boolean): void {
    const [namespace, id] = key.split('\u0000') as [string, string];
    const latest = this.isLive(namespace, id) ? this.res.latest(namespace, id) : undefined;
    const quiet = initial || !this.res.synced;
    const before = this.announced.get(key);
    if (latest) {
      if (before === latest.spec.revision) return;
      this.announced.set(key, latest.spec.revision);
      if (!quiet) this.events.emit({ type: 'SAVED', record: toRecord(latest, false) });
    } else if (before !== undefined) {
      this.announced.delete(key);
      if (!quiet) this.events.emit({ type: 'DELETED', namespace, id });
    }
  }
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
const keyOf = (spec: unknown): string[] => {
  const s = spec as { namespace?: unknown; id?: unknown } | undefined;
  return typeof s?.namespace === 'string' && typeof s.id === 'string' ? [flowKey(s.namespace, s.id)] : [];
};

export type { FlowObject, RevisionObject };
