// In-memory object storage with a global resourceVersion counter (like etcd's revision), a bounded event history for
// watches that resume from a resourceVersion, and live watchers.
import type { KubeObject } from './resources.js';

export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';
export interface StoreEvent { type: EventType; typeKey: string; rv: number; object: KubeObject; prev?: KubeObject }
export interface Watcher { typeKey: string; deliver(ev: StoreEvent): void }

const objKey = (ns: string | undefined, name: string): string => `${ns ?? ''}/${name}`;

export class Store {
  private rv = 0;
  private readonly types = new Map<string, Map<string, KubeObject>>();
  private readonly uids = new Map<string, { typeKey: string; obj: KubeObject }>();
  /** Per type, like the real server's watch cache: recent events and the highest resourceVersion dropped from them. */
  private readonly histories = new Map<string, { events: StoreEvent[]; evictedUpTo: number }>();
  private readonly watchers = new Set<Watcher>();
  /** owner uid → uids of the objects whose ownerReferences name it (the garbage collector's dependency graph). */
  private readonly dependents = new Map<string, Set<string>>();

  constructor(private readonly historyLimit: number) {}

  get resourceVersion(): number { return this.rv; }

  private bucket(typeKey: string): Map<string, KubeObject> {
    let b = this.types.get(typeKey);
    if (!b) { b = new Map(); this.types.set(typeKey, b); }
    return b;
  }

  get(typeKey: string, ns: string | undefined, name: string): KubeObject | undefined {
    return this.types.get(typeKey)?.get(objKey(ns, name));
  }

  byUid(uid: string): { typeKey: string; obj: KubeObject } | undefined { return this.uids.get(uid); }

  /** Objects of a type (optionally one namespace), sorted by namespace then name like etcd key order. */
  list(typeKey: string, ns?: string): KubeObject[] {
    const out: [string, KubeObject][] = [];
    for (const [k, o] of this.types.get(typeKey) ?? []) if (ns === undefined || k.startsWith(`${ns}/`)) out.push([k, o]);
    return out.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)).map((e) => e[1]);
  }

  private index(obj: KubeObject | undefined, add: boolean): void {
    const refs = obj && Array.isArray(obj.metadata.ownerReferences) ? obj.metadata.ownerReferences : [];
    for (const r of refs) {
      if (!r || typeof r.uid !== 'string') continue;
      let set = this.dependents.get(r.uid);
      if (add) {
        if (!set) { set = new Set(); this.dependents.set(r.uid, set); }
        set.add(obj!.metadata.uid);
      } else if (set) {
        set.delete(obj!.metadata.uid);
        if (set.size === 0) this.dependents.delete(r.uid);
      }
    }
  }

  /** Objects whose ownerReferences name `uid`. */
  dependentsOf(uid: string): { typeKey: string; obj: KubeObject }[] {
    return [...(this.dependents.get(uid) ?? [])].map((d) => this.uids.get(d)).filter((e): e is { typeKey: string; obj: KubeObject } => e !== undefined);
  }

  /** Every stored object with its type key (garbage collector scans). */
  *all(): Generator<{ typeKey: string; obj: KubeObject }> {
    for (const [typeKey, b] of this.types) for (const obj of b.values()) yield { typeKey, obj };
  }

  /** Store a new or changed object: stamps the next resourceVersion, records and publishes the event. */
  write(typeKey: string, obj: KubeObject): KubeObject {
    const b = this.bucket(typeKey);
    const k = objKey(obj.metadata.namespace, obj.metadata.name);
    const prev = b.get(k);
    obj.metadata.resourceVersion = String(++this.rv);
    this.index(prev, false);
    this.index(obj, true);
    b.set(k, obj);
    this.uids.set(obj.metadata.uid, { typeKey, obj });
    this.publish({ type: prev ? 'MODIFIED' : 'ADDED', typeKey, rv: this.rv, object: obj, prev });
    return obj;
  }

  remove(typeKey: string, obj: KubeObject): KubeObject {
    const b = this.bucket(typeKey);
    const k = objKey(obj.metadata.namespace, obj.metadata.name);
    const prev = b.get(k);
    if (!prev) return obj;
    b.delete(k);
    this.index(prev, false);
    this.uids.delete(prev.metadata.uid);
    const gone = { ...prev, metadata: { ...prev.metadata, resourceVersion: String(++this.rv) } };
    this.publish({ type: 'DELETED', typeKey, rv: this.rv, object: gone, prev });
    return gone;
  }

  private history(typeKey: string): { events: StoreEvent[]; evictedUpTo: number } {
    let h = this.histories.get(typeKey);
    if (!h) { h = { events: [], evictedUpTo: 0 }; this.histories.set(typeKey, h); }
    return h;
  }

  private publish(ev: StoreEvent): void {
    const h = this.history(ev.typeKey);
    h.events.push(ev);
    if (h.events.length > this.historyLimit * 2) {
      const drop = h.events.length - this.historyLimit;
      h.evictedUpTo = h.events[drop - 1].rv;
      h.events = h.events.slice(drop);
    }
    for (const w of this.watchers) if (w.typeKey === ev.typeKey) w.deliver(ev);
  }

  private trimmed(typeKey: string): { events: StoreEvent[]; evictedUpTo: number } {
    const h = this.history(typeKey);
    if (h.events.length > this.historyLimit) {
      const drop = h.events.length - this.historyLimit;
      h.evictedUpTo = h.events[drop - 1].rv;
      h.events = h.events.slice(drop);
    }
    return h;
  }

  /** Events of a type after `rv`, or 'expired' when some of them were dropped from the type's history window. */
  eventsSince(typeKey: string, rv: number): StoreEvent[] | 'expired' {
    const h = this.trimmed(typeKey);
    if (rv < h.evictedUpTo) return 'expired';
    return h.events.filter((e) => e.rv > rv);
  }

  /** Oldest resourceVersion a watch of the type can still start from. */
  oldestResumable(typeKey: string): number { return this.trimmed(typeKey).evictedUpTo; }

  addWatcher(w: Watcher): () => void {
    this.watchers.add(w);
    return () => { this.watchers.delete(w); };
  }

  /** Drop every object and the history (the resourceVersion counter keeps increasing). */
  clear(): void {
    this.types.clear();
    this.uids.clear();
    this.dependents.clear();
    this.histories.clear();
  }
}
