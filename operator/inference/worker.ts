// Embedded background worker: runs unfinished jobs (interrupted ones first, so a restart resumes them), a few at a
// time, woken on each submission and when a job ends, otherwise checking the store every second; cancels a running
// job on request, and purges the rows of jobs that ended longer ago than the retention setting.
import type { JobChannel } from './channel.js';
import type { JobRunner } from './runner.js';
import type { JobStore } from './db.js';

const PURGE_EVERY_MS = 10 * 60_000;

export class InferenceWorker {
  private stopping = new AbortController();
  private loop?: Promise<void>;
  private wakeUp?: () => void;
  private running = new Map<string, { done: Promise<void>; cancel: AbortController }>();
  private lastPurge = 0;

  /** `maxJobs` jobs run at once; their items share the backends' batches, so a small job is not stuck behind a big one. */
  constructor(private store: JobStore, private runner: JobRunner, private channelOf: (id: string) => JobChannel, private log: (msg: string) => void = () => {},
    private maxJobs = 2, private retentionHours = 0) {}

  start(): void {
    this.loop ??= this.run();
  }

  wake(): void { this.wakeUp?.(); }

  /** Stops a running job's generation (it then finalizes as CANCELLED); the store already records the request. */
  cancel(id: string): void {
    this.running.get(id)?.cancel.abort();
    this.wake();
  }

  /** Deletes job rows (and items) of jobs that ended more than the retention ago; returns how many. */
  purge(now = Date.now()): number {
    this.lastPurge = now;
    if (this.retentionHours <= 0) return 0;
    const n = this.store.purgeFinished(new Date(now - this.retentionHours * 3_600_000).toISOString());
    if (n) this.log(`inference: purged ${n} job(s) that ended more than ${this.retentionHours} h ago (INFERENCE_RETENTION_HOURS)`);
    return n;
  }

  private async run(): Promise<void> {
    const signal = this.stopping.signal;
    while (!signal.aborted) {
      if (Date.now() - this.lastPurge >= PURGE_EVERY_MS) {
        try { this.purge(); } catch (e) { this.log(`inference: purge failed: ${(e as Error).message}`); }
      }
      this.store.expireQueued(new Date().toISOString());
      const job = this.running.size < this.maxJobs ? this.store.nextRunnable(new Set(this.running.keys())) : undefined;
      if (!job) { await this.idle(1000); continue; }
      const cancel = new AbortController();
      const done = this.runJob(job.id, signal, cancel.signal).finally(() => { this.running.delete(job.id); this.wake(); });
      this.running.set(job.id, { done, cancel });
    }
    await Promise.all([...this.running.values()].map((r) => r.done));
  }

  private async runJob(id: string, signal: AbortSignal, cancel: AbortSignal): Promise<void> {
    try {
      await this.runner.run(this.channelOf(id), signal, cancel);
    } catch (e) {
      // A bug, not a job failure: record it so the loop does not spin on the same job.
      this.log(`inference job ${id} crashed: ${(e as Error).stack ?? e}`);
      if (!signal.aborted) this.store.finish(id, 'FAILED', `internal error: ${(e as Error).message}`);
    }
  }

  private idle(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const done = (): void => { clearTimeout(t); this.wakeUp = undefined; this.stopping.signal.removeEventListener('abort', done); resolve(); };
      const t = setTimeout(done, ms);
      this.wakeUp = done;
      this.stopping.signal.addEventListener('abort', done);
    });
  }

  /** Stops taking work; jobs in progress stop between items and resume at the next start. */
  async stop(): Promise<void> {
    this.stopping.abort();
    await this.loop;
  }
}
