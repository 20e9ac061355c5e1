// The leader's execution sweeper: every EXECUTION_SWEEP_INTERVAL_MS it archives the record of each finished Execution
// resource to the history database and deletes the resource once archived and EXECUTION_TTL_SECONDS past its end,
// conditionally on the uid and resourceVersion it archived (an execution restarted meanwhile is kept). Deleting it
// garbage-collects its Jobs. A crash or a failed call only delays: the next pass decides again from the resources.
import { backoff, isTransient, reasonOf } from '../../faults.js';
import type { KubeExecutionStore } from '../store/executions.js';
import type { ExecutionObject } from '../store/execution-codec.js';
import { executionIdOf, pendingOf } from '../store/execution-codec.js';
import { rvNumber } from '../store/kube-api.js';
import { decideSweep } from './decide.js';
import type { ExecutionArchive } from './types.js';
import { isTerminal } from '../../core/types.js';

export interface SweeperOptions {
  store: KubeExecutionStore;
  archive: ExecutionArchive;
  ttlSeconds: number;
  intervalMs: number;
  clock?: () => Date;
  onError?: (err: unknown, where: string) => void;
}

export interface SweepCounts { archived: number; deleted: number }

export class ExecutionSweeper {
  /** Resource name → the resourceVersion whose record the archive holds (loaded from the archive on the first pass). */
  private readonly archived = new Map<string, number>();
  /** Resource name → version whose archiving failed permanently (not tried again until it changes). */
  private readonly refused = new Map<string, number>();
  private loaded = false;
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<unknown> = Promise.resolve();
  private stopped = false;
  private failures = 0;
  private readonly unsubscribe: () => void;

  constructor(private readonly o: SweeperOptions) {
    this.unsubscribe = o.store.cache.on((e) => {
      if (e.type === 'deleted') { this.archived.delete(e.obj.metadata.name); this.refused.delete(e.obj.metadata.name); }
    });
  }

  start(): void { this.schedule(0); }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    this.unsubscribe();
    await this.running.catch(() => undefined);
  }

  /** One pass over every cached Execution (also what the timer runs); transient failures end the pass early. */
  sweep(): Promise<SweepCounts> {
    const run = this.running.catch(() => undefined).then(() => this.pass());
    this.running = run;
    return run;
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.sweep().then(() => { this.failures = 0; this.schedule(this.o.intervalMs); }, (err) => {
        this.o.onError?.(err, 'execution sweep');
        this.schedule(Math.max(this.o.intervalMs, backoff(this.failures++, { baseMs: 1000, maxMs: 300_000 })));
      });
    }, ms);
    this.timer.unref();
  }

  private async pass(): Promise<SweepCounts> {
    const counts = { archived: 0, deleted: 0 };
    const { store, archive } = this.o;
    await store.cache.ready();
    const objs = store.cache.list();
    if (!this.loaded) await this.load(objs);
    const ttlMs = this.o.ttlSeconds * 1000;
    for (const obj of objs) {
      if (this.stopped) break;
      const current = store.cache.get(obj.metadata.name);
      if (!current || rvNumber(current) !== rvNumber(obj)) continue; // changed meanwhile: the next pass sees it
      const e = store.recordOf(obj);
      if (!e) continue;
      const name = obj.metadata.name;
      const rv = rvNumber(obj);
      const parent = e.parent && store.liveRecord(e.parent.executionId);
      const facts = {
        state: e.state.current, endDate: e.state.endDate, created: obj.metadata.creationTimestamp,
        pendingCommands: pendingOf(obj).length, resourceVersion: rv, archivedVersion: this.archived.get(name),
        parentRunning: !!parent && !isTerminal(parent.state.current), deleting: !!obj.metadata.deletionTimestamp,
      };
      let decision = decideSweep(facts, this.now(), ttlMs);
      if (decision === 'archive') {
        if (this.refused.get(name) === rv) continue;
        try {
          await archive.upsert(e, { uid: obj.metadata.uid, resourceVersion: rv });
        } catch (err) {
          if (isTransient(err) || !isPermanentData(err)) throw err;
          this.refused.set(name, rv);
          this.o.onError?.(new Error(`Execution '${e.id}' cannot be archived (kept as a resource): ${reasonOf(err)}`), 'execution archive');
          continue;
        }
        this.archived.set(name, rv);
        counts.archived++;
        decision = decideSweep({ ...facts, archivedVersion: rv }, this.now(), ttlMs);
      }
      if (decision === 'delete' && (await store.deleteVersion(obj)) === 'deleted') counts.deleted++;
    }
    return counts;
  }

  /** First pass of this leader: which finished resources the archive already holds, at which version (one query). */
  private async load(objs: ExecutionObject[]): Promise<void> {
    const byId = new Map<string, string>();
    for (const obj of objs) {
      const e = this.o.store.recordOf(obj);
      if (e && isTerminal(e.state.current)) byId.set(executionIdOf(obj), obj.metadata.name);
    }
    const versions = await this.o.archive.archivedVersions([...byId.keys()]);
    for (const [id, rv] of versions) this.archived.set(byId.get(id)!, rv);
    this.loaded = true;
  }

  private now(): number { return (this.o.clock?.() ?? new Date()).getTime(); }
}

/** A row the database refuses for what it holds (data exception class 22, program limit class 54): retrying cannot help. */
const isPermanentData = (err: unknown): boolean => /^(22|54)/.test(String((err as { code?: string })?.code ?? ''));
