// Deletion semantics: finalizers (deletionTimestamp until they are removed), propagation policies (Background,
// Foreground, Orphan) and the garbage collector deleting dependents by owner uid, recursively; namespace deletion.
import { now } from './meta.js';
import type { KubeObject, ResourceType } from './resources.js';
import type { Store } from './store.js';

export type Propagation = 'Orphan' | 'Background' | 'Foreground';
export const ORPHAN = 'orphan';
export const FOREGROUND = 'foregroundDeletion';

type Task = { kind: 'owner-gone'; uid: string } | { kind: 'check'; uid: string } | { kind: 'finalize'; uid: string };
interface OwnerRef { uid: string; blockOwnerDeletion?: boolean }

const refs = (o: KubeObject): OwnerRef[] => (Array.isArray(o.metadata.ownerReferences) ? o.metadata.ownerReferences : []);

/** Runs asynchronously after the request that caused the work (like the real garbage collector), until idle. */
export class Collector {
  private queue: Task[] = [];
  private scheduled = false;
  private idleWaiters: (() => void)[] = [];

  /** `gracefulPods`: Pods bound to a node (spec.nodeName) are deleted gracefully, like a real kubelet-backed server. */
  constructor(private readonly store: Store, private readonly types: Map<string, ResourceType>, private readonly gracefulPods = false) {}

  /** A gracefully deleted Pod whose grace period has not ended: it stays until then or a delete with grace 0. */
  gracePending(typeKey: string, obj: KubeObject): boolean {
    const dt = obj.metadata.deletionTimestamp;
    return this.gracefulPods && typeKey === '/pods' && typeof dt === 'string' && (obj.metadata.deletionGracePeriodSeconds ?? 0) > 0 && Date.parse(dt) > Date.now();
  }

  /** Resolves once the collector has nothing left to do. */
  idle(): Promise<void> {
    if (!this.scheduled && this.queue.length === 0) return Promise.resolve();
    return new Promise((r) => this.idleWaiters.push(r));
  }

  private stopped = false;

  /** Stop working (server closed): queued and future work is dropped. */
  stop(): void {
    this.stopped = true;
    this.queue = [];
  }

  private enqueue(t: Task): void {
    if (this.stopped) return;
    this.queue.push(t);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.drain());
    }
  }

  private drain(): void {
    for (let i = 0; i < 100000 && this.queue.length; i++) {
      const task = this.queue.shift()!;
      try { this.run(task); } catch { /* a dependent changed under us; the next task or write requeues it */ }
    }
    this.scheduled = false;
    if (this.queue.length) { this.enqueue(this.queue.shift()!); return; }
    const w = this.idleWaiters;
    this.idleWaiters = [];
    for (const r of w) r();
  }

  /** Called after every create/update: check dangling owners and pending deletion finalizers. */
  objectChanged(_typeKey: string, obj: KubeObject): void {
    if (refs(obj).length) this.enqueue({ kind: 'check', uid: obj.metadata.uid });
    if (obj.metadata.deletionTimestamp) this.enqueue({ kind: 'finalize', uid: obj.metadata.uid });
  }

  /** Called after an object left the store: its dependents lose an owner; its owners may be waiting for it. */
  objectRemoved(typeKey: string, obj: KubeObject): void {
    this.enqueue({ kind: 'owner-gone', uid: obj.metadata.uid });
    for (const r of refs(obj)) this.enqueue({ kind: 'finalize', uid: r.uid });
    if (typeKey === '/namespaces') this.enqueue({ kind: 'owner-gone', uid: `ns:${obj.metadata.name}` });
  }

  /** DELETE: with finalizers (or a Foreground/Orphan policy) the object only gets a deletionTimestamp; else it goes now. */
  requestDeletion(typeKey: string, stored: KubeObject, policy: Propagation, graceSeconds?: number): KubeObject {
    const obj = structuredClone(stored);
    const m = obj.metadata;
    const fins: string[] = Array.isArray(m.finalizers) ? [...m.finalizers] : [];
    const isNamespace = typeKey === '/namespaces';
    if (this.gracefulPods && typeKey === '/pods' && obj.spec?.nodeName) {
      const grace = graceSeconds ?? obj.spec.terminationGracePeriodSeconds ?? 30;
      if (m.deletionTimestamp && grace === 0 && this.gracePending(typeKey, stored)) {
        m.deletionGracePeriodSeconds = 0;
        if (!fins.length) {
          const gone = this.store.remove(typeKey, obj);
          this.objectRemoved(typeKey, gone);
          return gone;
        }
        const w = this.store.write(typeKey, obj);
        return w;
      }
      if (!m.deletionTimestamp && grace > 0) {
        m.deletionTimestamp = new Date(Date.now() + grace * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
        m.deletionGracePeriodSeconds = grace;
        if (policy === 'Orphan') fins.push(ORPHAN);
        if (policy === 'Foreground') fins.push(FOREGROUND);
        if (fins.length) m.finalizers = fins;
        const w = this.store.write(typeKey, obj);
        this.objectChanged(typeKey, w);
        setTimeout(() => this.graceOver(w.metadata.uid), grace * 1000 + 50).unref();
        return w;
      }
    }
    if (m.deletionTimestamp) {
      if (policy === 'Orphan' && !fins.includes(ORPHAN) && !fins.includes(FOREGROUND)) fins.push(ORPHAN);
      if (policy === 'Foreground' && !fins.includes(FOREGROUND) && !fins.includes(ORPHAN)) fins.push(FOREGROUND);
      if (fins.length === (m.finalizers ?? []).length) return stored;
      m.finalizers = fins;
      const w = this.store.write(typeKey, obj);
      this.objectChanged(typeKey, w);
      return w;
    }
    if (policy === 'Orphan') fins.push(ORPHAN);
    if (policy === 'Foreground') fins.push(FOREGROUND);
    if (fins.length === 0 && !isNamespace) {
      const gone = this.store.remove(typeKey, obj);
      this.objectRemoved(typeKey, gone);
      return gone;
    }
    m.deletionTimestamp = now();
    m.deletionGracePeriodSeconds = 0;
    if (fins.length) m.finalizers = fins;
    if (isNamespace) obj.status = { ...(obj.status ?? {}), phase: 'Terminating' };
    const w = this.store.write(typeKey, obj);
    this.objectChanged(typeKey, w);
    return w;
  }

  private graceOver(uid: string): void {
    const found = this.store.byUid(uid);
    if (!found || found.obj.metadata.finalizers?.length) return;
    const gone = this.store.remove(found.typeKey, found.obj);
    this.objectRemoved(found.typeKey, gone);
  }

  private dependentsOf(uid: string): { typeKey: string; obj: KubeObject }[] {
    return this.store.dependentsOf(uid);
  }

  private run(task: Task): void {
    if (task.kind === 'owner-gone') {
      if (task.uid.startsWith('ns:')) return;
      for (const d of this.dependentsOf(task.uid)) this.checkOwners(d.typeKey, d.obj);
      return;
    }
    const found = this.store.byUid(task.uid);
    if (!found) return;
    if (task.kind === 'check') this.checkOwners(found.typeKey, found.obj);
    else this.finalize(found.typeKey, found.obj);
  }

  /** Owners that no longer exist: drop the references, or delete the dependent when none is left. */
  private checkOwners(typeKey: string, obj: KubeObject): void {
    const rs = refs(obj);
    if (!rs.length || obj.metadata.deletionTimestamp) return;
    // Like the real collector, an owner is looked up in the dependent's namespace (or cluster scope).
    const alive = rs.filter((r) => {
      const owner = this.store.byUid(r.uid)?.obj;
      return owner !== undefined && (owner.metadata.namespace === undefined || owner.metadata.namespace === obj.metadata.namespace);
    });
    if (alive.length === rs.length) return;
    if (alive.length > 0) {
      const next = structuredClone(obj);
      next.metadata.ownerReferences = alive;
      this.store.write(typeKey, next);
      return;
    }
    const waiting = rs.some((r) => (this.store.byUid(r.uid)?.obj.metadata.finalizers ?? []).includes(FOREGROUND));
    this.requestDeletion(typeKey, obj, waiting ? 'Foreground' : 'Background');
  }

  /** Work of the orphan / foregroundDeletion finalizers and of namespace termination. */
  private finalize(typeKey: string, obj: KubeObject): void {
    if (!obj.metadata.deletionTimestamp) return;
    const uid = obj.metadata.uid;
    const fins: string[] = obj.metadata.finalizers ?? [];
    let remove: string | undefined;
    if (fins.includes(ORPHAN)) {
      for (const d of this.dependentsOf(uid)) {
        const next = structuredClone(d.obj);
        next.metadata.ownerReferences = refs(next).filter((r) => r.uid !== uid);
        if (!next.metadata.ownerReferences.length) delete next.metadata.ownerReferences;
        this.store.write(d.typeKey, next);
      }
      remove = ORPHAN;
    } else if (fins.includes(FOREGROUND)) {
      const deps = this.dependentsOf(uid);
      for (const d of deps) {
        if (d.obj.metadata.deletionTimestamp) continue;
        const block = refs(d.obj).find((r) => r.uid === uid)?.blockOwnerDeletion === true;
        this.requestDeletion(d.typeKey, d.obj, block ? 'Foreground' : 'Background');
      }
      const blocking = this.dependentsOf(uid).filter((d) => refs(d.obj).find((r) => r.uid === uid)?.blockOwnerDeletion === true);
      if (blocking.length === 0) remove = FOREGROUND;
    }
    if (typeKey === '/namespaces') { this.finalizeNamespace(obj); return; }
    if (!remove) return;
    this.dropFinalizer(typeKey, obj, remove);
  }

  private dropFinalizer(typeKey: string, obj: KubeObject, fin: string): void {
    const next = structuredClone(obj);
    next.metadata.finalizers = (next.metadata.finalizers ?? []).filter((f: string) => f !== fin);
    if (next.metadata.finalizers.length === 0 && !this.gracePending(typeKey, next)) {
      delete next.metadata.finalizers;
      const gone = this.store.remove(typeKey, next);
      this.objectRemoved(typeKey, gone);
    } else {
      const w = this.store.write(typeKey, next);
      this.objectChanged(typeKey, w);
    }
  }

  /** A terminating namespace deletes its content, then goes once nothing is left in it. */
  private finalizeNamespace(ns: KubeObject): void {
    const name = ns.metadata.name;
    let left = 0;
    for (const e of [...this.store.all()]) {
      if (e.obj.metadata.namespace !== name || !this.types.get(e.typeKey)?.namespaced) continue;
      left++;
      if (!e.obj.metadata.deletionTimestamp) this.requestDeletion(e.typeKey, e.obj, 'Background');
    }
    if (left > 0) { setTimeout(() => this.enqueue({ kind: "finalize", uid: ns.metadata.uid }), 20).unref(); return; }
    const fins: string[] = ns.metadata.finalizers ?? [];
    if (fins.length) return;
    const gone = this.store.remove('/namespaces', ns);
    this.objectRemoved('/namespaces', gone);
  }
}
