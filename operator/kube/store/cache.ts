// Informer-backed cache of one custom resource kind (client-node's ListWatch), with read-your-writes: objects returned
// by our own writes are merged in at once (newest resourceVersion wins), so a store read after a write sees it and
// listeners run after the write is visible. Keeps secondary indexes, restarts a failed watch, re-lists periodically.
import { type KubeConfig, type KubernetesObject, type KubernetesListObject, makeInformer } from '@kubernetes/client-node';
import { type AnyKubeObject, apiMessage, type KindApi, rvNumber, statusCode } from './kube-api.js';
import { backoff } from '../../faults.js';
import { withoutManagedFields } from '../informer.js';
import { WatchRestarts, isWatchEnd } from '../watch-restart.js';

export interface CacheEvent<O> {
  type: 'added' | 'modified' | 'deleted';
  obj: O;
  /** The cached object this event replaces (modified, deleted). */
  previous?: O;
  /** Delivered while the first list is loaded (before `ready()`): state that existed before we started. */
  initial: boolean;
}

export interface CacheOptions {
  /** Full re-list period that heals anything a watch missed (0 disables); default 30 minutes. */
  resyncMs?: number;
  /** Called on the first watch/list failure of a streak (default: console.warn); routine watch ends are not failures. */
  onError?: (err: unknown) => void;
}

const MAX_TOMBSTONES = 10_000;

export class KubeCache<O extends AnyKubeObject> {
  private readonly objects = new Map<string, O>();
  /** name → resourceVersion at which it was deleted: older observations of the name are ignored. */
  private readonly tombstones = new Map<string, number>();
  private readonly indexes = new Map<string, { fn: (o: O) => string[]; map: Map<string, Set<string>> }>();
  private readonly listeners = new Set<(e: CacheEvent<O>) => void>();
  private readonly syncedPromise: Promise<void>;
  private resolveSynced!: () => void;
  private synced = false;
  private closed = false;
  private failures = 0;
  private lastFailure: unknown;
  private restartTimer?: NodeJS.Timeout;
  /** Tells routine watch ends (the server's timeout: "Premature close") from failures. */
  private readonly ends = new WatchRestarts();
  private resyncTimer?: NodeJS.Timeout;
  private keepAlive?: NodeJS.Timeout;
  private informer?: ReturnType<typeof makeInformer<KubernetesObject>>;

  constructor(private readonly kc: KubeConfig, readonly api: KindApi<O>, private readonly opts: CacheOptions = {}) {
    this.syncedPromise = new Promise((resolve) => { this.resolveSynced = resolve; });
  }

  /** Secondary index: `fn` gives the keys of an object. Add before `start()`. */
  addIndex(name: string, fn: (o: O) => string[]): void {
    this.indexes.set(name, { fn, map: new Map() });
  }

  byIndex(name: string, key: string): O[] {
    const names = this.indexes.get(name)?.map.get(key);
    return names ? [...names].map((n) => this.objects.get(n)!).filter(Boolean) : [];
  }

  /** Starts the list+watch; `ready()` resolves once the first list is in the cache. */
  start(): void {
    const listFn = async (): Promise<KubernetesListObject<KubernetesObject>> => {
      const list = await this.api.list();
      this.failures = 0;
      // Applied here rather than through the informer's callbacks: those report a vanished object with its old
      // resourceVersion, which cannot beat a newer copy our own writes put in the cache.
      this.applyList(list);
      setImmediate(() => this.markSynced());
      return list as unknown as KubernetesListObject<KubernetesObject>;
    };
    const informer = makeInformer<KubernetesObject>(this.kc, this.api.path, listFn);
    informer.on('add', (o) => { this.failures = 0; this.observe(o as unknown as O); });
    informer.on('update', (o) => { this.failures = 0; this.observe(o as unknown as O); });
    informer.on('delete', (o) => { this.failures = 0; this.observeDeleted(o as unknown as O); });
    informer.on('error', (err) => this.failed(err));
    this.informer = informer;
    informer.start().catch((err: unknown) => this.failed(err));
    const every = this.opts.resyncMs ?? 1_800_000;
    if (every > 0) {
      this.resyncTimer = setInterval(() => { this.resync().catch((err: unknown) => this.report(err, true)); }, every);
      this.resyncTimer.unref();
    }
  }

  /**
   * Resolves once the first list is in. Until then a waiter keeps the process alive (a ref'd handle): the retry and
   * resync timers are unref'd so a stopped or idle cache never does, and a process whose only work is this wait (a
   * task runner at start) would otherwise exit while the API server answers errors. stop() releases the handle.
   */
  ready(): Promise<void> {
    if (!this.synced && !this.closed) this.keepAlive ??= setInterval(() => {}, 1 << 30);
    return this.syncedPromise;
  }
  /** The last list/watch failure (cleared by a successful list), for start-up diagnostics. */
  get lastError(): unknown { return this.failures > 0 ? this.lastFailure : undefined; }
  get isSynced(): boolean { return this.synced; }

  async stop(): Promise<void> {
    this.closed = true;
    clearTimeout(this.restartTimer);
    clearInterval(this.resyncTimer);
    clearInterval(this.keepAlive);
    await this.informer?.stop();
  }

  on(listener: (e: CacheEvent<O>) => void): () => void {
    this.listeners.add(listener);
    return () => { this.listeners.delete(listener); };
  }

  get(name: string): O | undefined { return this.objects.get(name); }
  list(): O[] { return [...this.objects.values()]; }

  /** Merges an object the server returned (write response, GET): kept when newer than what we hold. */
  observe(served: O): void {
    const obj = withoutManagedFields(served); // kept out of the cache: see informer.ts
    const name = obj.metadata?.name;
    if (!name) return;
    const rv = rvNumber(obj);
    const tomb = this.tombstones.get(name);
    if (tomb !== undefined && rv <= tomb) return;
    const previous = this.objects.get(name);
    if (previous && rvNumber(previous) >= rv) return;
    if (tomb !== undefined) this.tombstones.delete(name);
    this.objects.set(name, obj);
    this.reindex(name, previous, obj);
    this.emit({ type: previous ? 'modified' : 'added', obj, previous, initial: !this.synced });
  }

  /** Removes an object known to be deleted at `rv` (a watch DELETED event, our own DELETE, a 404). */
  observeDeleted(obj: O, rv = rvNumber(obj)): void {
    const name = obj.metadata?.name;
    if (!name) return;
    const current = this.objects.get(name);
    if (current && rvNumber(current) > rv) return; // a newer incarnation of the name is already here
    this.tombstones.set(name, Math.max(rv, this.tombstones.get(name) ?? 0));
    if (this.tombstones.size > MAX_TOMBSTONES) this.tombstones.delete(this.tombstones.keys().next().value!);
    if (!current) return;
    this.objects.delete(name);
    this.reindex(name, current, undefined);
    this.emit({ type: 'deleted', obj: current, previous: current, initial: !this.synced });
  }

  /** Reads one object from the server and merges it; returns the freshest copy we hold (undefined when gone). */
  async refresh(name: string): Promise<O | undefined> {
    const fresh = await this.api.get(name);
    if (fresh) this.observe(fresh);
    else {
      const cur = this.objects.get(name);
      if (cur) this.observeDeleted(cur);
    }
    return this.objects.get(name);
  }

  /** Full re-list: merges every object and drops those the server no longer has. */
  async resync(): Promise<void> {
    this.applyList(await this.api.list());
  }

  /** A list is a snapshot at its resourceVersion: objects absent from it and not newer than it are gone. */
  private applyList(list: { items: O[]; metadata?: { resourceVersion?: string } }): void {
    const listRv = Number(list.metadata?.resourceVersion ?? 0);
    const seen = new Set<string>();
    for (const item of list.items ?? []) { seen.add(item.metadata.name); this.observe(item); }
    for (const [name, obj] of [...this.objects]) {
      if (!seen.has(name) && rvNumber(obj) <= listRv) this.observeDeleted(obj, listRv);
    }
  }

  private markSynced(): void {
    if (this.synced) return;
    this.synced = true;
    this.failures = 0;
    clearInterval(this.keepAlive);
    this.resolveSynced();
  }

  private emit(event: CacheEvent<O>): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(event);
      } catch (err) {
        console.error(`[kube-store] ${this.api.kind.kind} listener failed:`, err);
      }
    }
  }

  private reindex(name: string, before: O | undefined, after: O | undefined): void {
    for (const { fn, map } of this.indexes.values()) {
      for (const key of before ? fn(before) : []) {
        const set = map.get(key);
        set?.delete(name);
        if (set?.size === 0) map.delete(key);
      }
      for (const key of after ? fn(after) : []) {
        let set = map.get(key);
        if (!set) map.set(key, (set = new Set()));
        set.add(name);
      }
    }
  }

  /** Reports the first failure of a streak (or any one, when `always`: a failed periodic re-list). */
  private report(err: unknown, always = false): void {
    if (this.closed || (!always && this.failures !== 1)) return;
    if (this.opts.onError) this.opts.onError(err);
    else console.warn(`[kube-store] ${this.api.kind.plural} list/watch failed (${statusCode(err) ?? 'network'}): ${apiMessage(err)}; retrying`);
  }

  /** The informer stops on any error other than 410: restart it with a capped backoff (it resumes from its last resourceVersion). */
  private failed(err: unknown): void {
    if (this.closed || this.restartTimer) return;
    if (isWatchEnd(err) && this.ends.next(err).routine) {
      this.failures = 0; // the watch was running: a failure streak, if any, is over
      this.informer?.start().catch((e: unknown) => this.failed(e)); // resumes from its last resourceVersion, at once
      return;
    }
    this.failures++;
    this.lastFailure = err;
    this.report(err);
    const delay = backoff(this.failures, { baseMs: 250, maxMs: 30_000 });
    this.restartTimer = setTimeout(() => {
      this.restartTimer = undefined;
      if (this.closed) return;
      this.informer?.start().catch((e: unknown) => this.failed(e));
    }, delay);
    this.restartTimer.unref();
  }
}
