// Flow and FlowRevision resources: their shapes, the caches with (flow namespace, flow id) indexes, the record a
// revision maps to, and Flow status writes (revision, observedGeneration, Ready condition).
import { isDeepStrictEqual } from 'node:util';
import type { KubeConfig } from '@kubernetes/client-node';
import { parse as parseYaml } from 'yaml';
import type { Flow } from '../../core/types.js';
import type { FlowRecord } from '../../store/types.js';
import { KINDS, LABELS, MANAGER, flowName, flowRevisionName } from '../names.js';
import { type CacheOptions, KubeCache } from './cache.js';
import { KindApi, type KubeObject, isConflict, retrying } from './kube-api.js';
import { ANNOTATIONS, flowLabels } from './labels.js';

export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  observedGeneration?: number;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface FlowStatus { revision?: number; observedGeneration?: number; conditions?: Condition[]; message?: string }
export type FlowObject = KubeObject<Record<string, unknown>, FlowStatus>;

export interface RevisionSpec { namespace: string; id: string; revision: number; source?: string; flow: Flow }
export type RevisionObject = KubeObject<RevisionSpec>;

export const flowKey = (namespace: string, id: string): string => `${namespace}\u0000${id}`;

function specKey(spec: unknown): string[] {
  const s = spec as { namespace?: unknown; id?: unknown } | undefined;
  return typeof s?.namespace === 'string' && typeof s.id === 'string' ? [flowKey(s.namespace, s.id)] : [];
}

/** The flow document of a YAML source (what a Flow resource's spec holds). */
export function flowDocument(source: string): Record<string, unknown> {
  const doc = parseYaml(source, { merge: true, maxAliasCount: 1000 }) as unknown;
  return doc && typeof doc === 'object' && !Array.isArray(doc) ? (doc as Record<string, unknown>) : {};
}

/** Does a revision hold the same flow document as `doc` (formatting and comments aside)? */
export function sameDocument(rev: RevisionObject | undefined, doc: unknown): boolean {
  if (!rev) return false;
  const source = rev.spec.source;
  if (source === undefined) return false;
  try {
    return isDeepStrictEqual(JSON.parse(JSON.stringify(flowDocument(source))), JSON.parse(JSON.stringify(doc ?? {})));
  } catch {
    return false;
  }
}

export function toRecord(rev: RevisionObject, deleted: boolean): FlowRecord {
  const spec = rev.spec;
  const record: FlowRecord = {
    namespace: spec.namespace,
    id: spec.id,
    revision: spec.revision,
    source: spec.source ?? '',
    flow: { ...structuredClone(spec.flow), revision: spec.revision },
    updated: rev.metadata.annotations?.[ANNOTATIONS.updated] ?? rev.metadata.creationTimestamp ?? '',
  };
  if (deleted) record.deleted = true;
  return record;
}

/** The two caches and the writes shared by the flow store and the reconciler. */
export class FlowResources {
  readonly flowsApi: KindApi<FlowObject>;
  readonly revisionsApi: KindApi<RevisionObject>;
  readonly flows: KubeCache<FlowObject>;
  readonly revisions: KubeCache<RevisionObject>;

  constructor(kc: KubeConfig, namespace: string, opts: CacheOptions = {}) {
    this.flowsApi = new KindApi<FlowObject>(kc, KINDS.Flow, namespace);
    this.revisionsApi = new KindApi<RevisionObject>(kc, KINDS.FlowRevision, namespace);
    this.flows = new KubeCache(kc, this.flowsApi, opts);
    this.revisions = new KubeCache(kc, this.revisionsApi, opts);
    this.flows.addIndex('key', (o) => specKey(o.spec));
    this.revisions.addIndex('key', (o) => specKey(o.spec));
  }

  async ready(): Promise<void> { await Promise.all([this.flows.ready(), this.revisions.ready()]); }
  get synced(): boolean { return this.flows.isSynced && this.revisions.isSynced; }

  /** The Flow resource defining (namespace, id): the oldest one when several claim it; none while being deleted. */
  liveFlow(namespace: string, id: string): FlowObject | undefined {
    const candidates = this.flows.byIndex('key', flowKey(namespace, id)).filter((f) => !f.metadata.deletionTimestamp);
    candidates.sort((a, b) => (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '') || a.metadata.name.localeCompare(b.metadata.name));
    return candidates[0];
  }

  revisionsOf(namespace: string, id: string): RevisionObject[] {
    return this.revisions.byIndex('key', flowKey(namespace, id)).sort((a, b) => a.spec.revision - b.spec.revision);
  }

  latest(namespace: string, id: string): RevisionObject | undefined {
    return this.revisionsOf(namespace, id).at(-1);
  }

  /** Creates revision `revision`; a 409 (someone else took the number) refreshes the cache and rethrows. */
  async createRevision(flow: Flow, revision: number, source: string): Promise<RevisionObject> {
    const name = flowRevisionName(flowName(flow.namespace, flow.id), revision);
    const body = this.revisionsApi.body({
      metadata: { name, labels: flowLabels(flow.namespace, flow.id), annotations: { [ANNOTATIONS.updated]: new Date().toISOString() } },
      spec: { namespace: flow.namespace, id: flow.id, revision, source, flow: JSON.parse(JSON.stringify({ ...flow, revision })) as Flow },
    });
    try {
      const created = await this.revisionsApi.create(body);
      this.revisions.observe(created);
      return created;
    } catch (err) {
      if (isConflict(err)) await this.revisions.refresh(name);
      throw err;
    }
  }

  /** Creates the Flow resource of (namespace, id) or replaces its spec (conditional on resourceVersion, retried). */
  async upsertFlowSpec(namespace: string, id: string, doc: Record<string, unknown>): Promise<FlowObject> {
    return retrying(10, isConflict, async (attempt) => {
      let current = this.liveFlow(namespace, id);
      if (attempt > 0 && current) current = await this.flows.refresh(current.metadata.name);
      if (!current) {
        const name = flowName(namespace, id);
        try {
          const created = await this.flowsApi.create(this.flowsApi.body({
            metadata: { name, labels: { [LABELS.managedBy]: MANAGER, ...flowLabels(namespace, id) } }, spec: doc,
          }));
          this.flows.observe(created);
          return created;
        } catch (err) {
          if (isConflict(err)) await this.flows.refresh(name);
          throw err;
        }
      }
      if (isDeepStrictEqual(current.spec, doc)) return current;
      const replaced = await this.flowsApi.replace(this.flowsApi.body({ metadata: current.metadata, spec: doc }));
      this.flows.observe(replaced);
      return replaced;
    });
  }

  /**
   * Writes Flow status for `generation`: Ready True with `revision`, or Ready False with `message`. Skipped when the
   * status already describes a newer generation. Conditional on resourceVersion, retried on conflicts.
   */
  async writeStatus(name: string, generation: number, result: { revision?: number; error?: string }): Promise<void> {
    await retrying(10, isConflict, async (attempt) => {
      const current = attempt > 0 ? await this.flows.refresh(name) : this.flows.get(name) ?? (await this.flows.refresh(name));
      if (!current || current.metadata.deletionTimestamp) return;
      const before = current.status ?? {};
      if ((before.observedGeneration ?? 0) > generation) return;
      const ready = result.error === undefined;
      const previous = before.conditions?.find((c) => c.type === 'Ready');
      const condition: Condition = {
        type: 'Ready',
        status: ready ? 'True' : 'False',
        observedGeneration: generation,
        lastTransitionTime: previous && previous.status === (ready ? 'True' : 'False') && previous.lastTransitionTime
          ? previous.lastTransitionTime : new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
        reason: ready ? 'RevisionSaved' : 'InvalidFlow',
        message: ready ? `Revision ${result.revision} is current` : result.error!,
      };
      const status: FlowStatus = {
        observedGeneration: generation,
        conditions: [...(before.conditions ?? []).filter((c) => c.type !== 'Ready'), condition],
      };
      const revision = result.revision ?? before.revision;
      if (revision !== undefined) status.revision = revision;
      if (!ready) status.message = result.error;
      if (isDeepStrictEqual(before, status)) return;
      const written = await this.flowsApi.replaceStatus({ ...this.flowsApi.body({ metadata: current.metadata, spec: current.spec }), status });
      this.flows.observe(written);
    });
  }

  async start(): Promise<void> { this.flows.start(); this.revisions.start(); }
  async stop(): Promise<void> { await Promise.all([this.flows.stop(), this.revisions.stop()]); }
}
