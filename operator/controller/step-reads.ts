// No remote I/O inside the engine's step: the renderer the engine gets answers `kv()` and `read()` from values fetched
// beforehand (asynchronously, through the stores), and `now()` from the step's injected clock. A step that asks for a
// value not fetched yet is run again once it is (steps are pure, so a discarded run has no effect). The values are
// fetched through the stepped execution's views (operator/tenancy): what it may not read fails its template.
import type { Renderer } from '../core/engine-types.js';
import { isTransient, PermanentError, reasonOf } from '../faults.js';
import type { InternalStorage, KVEntry, KVStore, Stores } from '../store/types.js';
import { createSecretRenderer } from './secrets.js';

/**
 * Template functions whose values a step fetches from the stores before running again (the kinds of `Miss`): kv, read
 * and stat (fileSize, fileExists, isFileEmpty); and render()/renderOnce(), whose rendered text may call them.
 */
export const STEP_READ_FUNCTIONS = ['kv', 'read', 'fileSize', 'fileExists', 'isFileEmpty', 'render', 'renderOnce'] as const;

type Kept<T> = { value: T } | { error: unknown };
type Miss = { kind: 'kv'; namespace: string; key: string } | { kind: 'read'; uri: string } | { kind: 'stat'; uri: string };

/** Where a step's `kv()` and `read()` values are fetched from: the stepped execution's views. */
export interface StepViews { kv: Pick<KVStore, 'get'>; storage: Pick<InternalStorage, 'get' | 'exists' | 'size'> }

/** The values one batch of events has fetched, and what its last run asked for without having it. */
export class StepReads {
  // Made on first use: most steps fetch nothing, and a batch makes one of these per step.
  private kvs: Map<string, Kept<KVEntry | undefined>> | undefined;
  private files: Map<string, Kept<Buffer>> | undefined;
  private sizes: Map<string, Kept<number | undefined>> | undefined;
  private missing: Map<string, Miss> | undefined;

  /** A miss is recorded and answered "absent": the run's result is discarded anyway. */
  kv(namespace: string, key: string): KVEntry | undefined {
    const id = JSON.stringify([namespace, key]);
    const kept = this.kvs?.get(id);
    if (!kept) { (this.missing ??= new Map()).set(`kv${id}`, { kind: 'kv', namespace, key }); return undefined; }
    if ('error' in kept) throw kept.error;
    return kept.value;
  }

  read(uri: string): Buffer {
    const kept = this.files?.get(uri);
    if (!kept) { (this.missing ??= new Map()).set(`read${uri}`, { kind: 'read', uri }); return Buffer.alloc(0); }
    if ('error' in kept) throw kept.error;
    return kept.value;
  }

  /** Size of a file, undefined when it does not exist (the file functions). */
  stat(uri: string): number | undefined {
    const kept = this.sizes?.get(uri);
    if (!kept) { (this.missing ??= new Map()).set(`stat${uri}`, { kind: 'stat', uri }); return undefined; }
    if ('error' in kept) throw kept.error;
    return kept.value;
  }

  /** Whether the last run asked for a value not fetched yet. */
  get missed(): boolean { return this.missing !== undefined && this.missing.size > 0; }

  begin(): void { this.missing = undefined; }

  /** Fetches what the last run missed. A transient failure is thrown (the batch is retried); others are kept and rethrown to the template. */
  async fetch(stores: StepViews): Promise<void> {
    for (const miss of this.missing?.values() ?? []) {
      const [map, id, get] = miss.kind === 'kv'
        ? [(this.kvs ??= new Map()) as Map<string, Kept<unknown>>, JSON.stringify([miss.namespace, miss.key]), () => stores.kv.get(miss.namespace, miss.key)]
        : miss.kind === 'read'
          ? [(this.files ??= new Map()) as Map<string, Kept<unknown>>, miss.uri, () => stores.storage.get(miss.uri)]
          : [(this.sizes ??= new Map()) as Map<string, Kept<unknown>>, miss.uri, async () => ((await stores.storage.exists(miss.uri)) ? stores.storage.size(miss.uri) : undefined)];
      try {
        map.set(id, { value: await get() });
      } catch (err) {
        if (isTransient(err)) throw err;
        map.set(id, { error: err });
      }
    }
    this.missing = undefined;
  }
}

/** A step run `once` asked for values not fetched yet: its result (and its record, changed in place) must be discarded. */
export class StepReadsMissed extends Error {
  constructor() { super('The step asked for kv() or read() values not fetched yet'); }
}

/** The engine's renderer (secrets as everywhere; `kv()`, `read()` and `now()` from the running step) and the runner of steps. */
export class EngineReads {
  readonly renderer: Renderer;
  private current: StepReads | undefined;
  private now = new Date(0);

  constructor(private readonly stores: Stores, env: NodeJS.ProcessEnv, secrets?: (name: string) => string | undefined) {
    this.renderer = createSecretRenderer(stores, env, secrets, {
      kv: (namespace, key) => this.active().kv(namespace, key),
      read: (uri) => this.active().read(uri),
      stat: (uri) => this.active().stat(uri),
      now: () => this.now,
    });
  }

  /**
   * Runs `step` (synchronous, pure, rendering through `this.renderer`) until a run needs no value it has not fetched;
   * fetches the missing ones between runs. Each run strictly grows what is fetched, so this ends. What the step
   * throws is permanent (PermanentError); a transient failure to fetch is thrown as is.
   */
  async run<T>(now: Date, step: () => T, views: StepViews = this.stores, opts: { once?: boolean } = {}): Promise<T> {
    const reads = new StepReads();
    for (;;) {
      let result: T | undefined;
      let error: unknown;
      let failed = false;
      reads.begin();
      this.current = reads;
      this.now = now;
      try { result = step(); } catch (err) { failed = true; error = err; } finally { this.current = undefined; }
      if (!reads.missed) {
        if (failed) throw error instanceof PermanentError ? error : new PermanentError(`The engine failed on this execution: ${reasonOf(error)}`, { cause: error });
        return result as T;
      }
      // A step that changed its record in place (engine.ts stepOwned) cannot run again.
      if (opts.once) throw new StepReadsMissed();
      await reads.fetch(views);
    }
  }

  private active(): StepReads {
    if (!this.current) throw new Error('kv() and read() of the engine are only available inside a step');
    return this.current;
  }
}
