// Embedded background worker: runs unfinished jobs one after another (interrupted RUNNING ones first, so a
// restart resumes them), woken on each submission and otherwise checking the store every second.
import type { JobRunner } from './runner.js';
import type { JobStore } from './db.js';

export class InferenceWorker {
  private stopping = new AbortController();
  private loop?: Promise<void>;
  private wakeUp?: () => void;

  constructor(private store: JobStore, private runner: JobRunner, private log: (msg: string) => void = () => {}) {}

  start(): void {
    this.loop ??= this.run();
  }

  wake(): void { this.wakeUp?.(); }

  private async run(): Promise<void> {
    const signal = this.stopping.signal;
    while (!signal.aborted) {
      const job = this.store.nextRunnable();
      if (!job) { await this.idle(1000); continue; }
      try {
        await this.runner.run(job.id, signal);
      } catch (e) {
        // A bug, not a job failure: record it so the loop does not spin on the same job.
        this.log(`inference job ${job.id} crashed: ${(e as Error).stack ?? e}`);
        if (!signal.aborted) this.store.finish(job.id, 'FAILED', `internal error: ${(e as Error).message}`);
      }
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

  /** Stops taking work; the job in progress stops between items and resumes at the next start. */
  async stop(): Promise<void> {
    this.stopping.abort();
    await this.loop;
  }
}
