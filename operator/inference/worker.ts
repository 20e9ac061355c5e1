// Embedded background worker: runs unfinished jobs (interrupted RUNNING ones first, so a restart resumes them),
// a few at a time, woken on each submission and when a job ends, otherwise checking the store every second.
import type { JobRunner } from './runner.js';
import type { JobStore } from './db.js';

export class InferenceWorker {
  private stopping = new AbortController();
  private loop?: Promise<void>;
  private wakeUp?: () => void;
  private running = new Map<string, Promise<void>>();

  /** `maxJobs` jobs run at once; their items share the backends' batches, so a small job is not stuck behind a big one. */
  constructor(private store: JobStore, private runner: JobRunner, private log: (msg: string) => void = () => {},
    private maxJobs = 2) {}

  start(): void {
    this.loop ??= this.run();
  }

  wake(): void { this.wakeUp?.(); }

  private async run(): Promise<void> {
    const signal = this.stopping.signal;
    while (!signal.aborted) {
      const job = this.running.size < this.maxJobs ? this.store.nextRunnable(new Set(this.running.keys())) : undefined;
      if (!job) { await this.idle(1000); continue; }
      const p = this.runJob(job.id, signal).finally(() => { this.running.delete(job.id); this.wake(); });
      this.running.set(job.id, p);
    }
    await Promise.all(this.running.values());
  }

  private async runJob(id: string, signal: AbortSignal): Promise<void> {
    try {
      await this.runner.run(id, signal);
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
