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
  private history: StoreEvent[] = [];
  /** Highest resourceVersion whose event was dropped from the history (0: none dropped). */
  private evictedUpTo = 0;
  private readonly watchers = new Set<Watcher>();

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
    const out: KubeObject[] = [];
    for (const [k, o] of this.types.get(typeKey) ?? []) if (ns === undefined || k.startsWith(`${ns}/`)) out.push(o);
    return out.sort((a, b) => objKey(a.metadata.namespace, a.metadata.name).localeCompare(objKey(b.metadata.namespace, b.metadata.name)));
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
    this.uids.delete(prev.metadata.uid);
    const gone = { ...prev, metadata: { ...prev.metadata, resourceVersion: String(++this.rv) } };
    this.publish({ type: 'DELETED', typeKey, rv: this.rv, object: gone, prev });
    return gone;
  }

  private publish(ev: StoreEvent): void {
    this.history.push(ev);
    if (this.history.length > this.historyLimit) {
      const drop = this.history.length - this.historyLimit;
      this.evictedUpTo = this.history[drop - 1].rv;
      this.history = this.history.slice(drop);
    }
    for (const w of this.watchers) if (w.typeKey === ev.typeKey) w.deliver(ev);
  }

  /** Events of a type after `rv`, or 'expired' when some of them were dropped from the history window. */
  eventsSince(typeKey: string, rv: number): StoreEvent[] | 'expired' {
    if (rv < this.evictedUpTo) return 'expired';
    return this.history.filter((e) => e.rv > rv && e.typeKey === typeKey);
  }

  /** Oldest resourceVersion a watch can still start from. */
  get oldestResumable(): number { return this.evictedUpTo; }

  addWatcher(w: Watcher): () => void {
    this.watchers.add(w);
    return () => { this.watchers.delete(w); };
  }

  /** Drop every object and the history (the resourceVersion counter keeps increasing). */
  clear(): void {
    this.types.clear();
    this.uids.clear();
    this.evictedUpTo = this.rv;
    this.history = [];
  }
}
