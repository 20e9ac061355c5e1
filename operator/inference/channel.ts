// The job channel: how the one job runner (runner.ts) reads its job, commits item outcomes and reports its state, per
// home. Embedded: SqliteJobChannel below (the job DB, db.ts). Cluster: kube/channel.ts (the bucket checkpoint and the
// runner's report ConfigMap, which the reconciler folds into the InferenceJob's status: the runner never writes it).
import type { JobSecrets } from './auth.js';
import { FINAL_STATES, type FinalState, type ItemOutcome, type ItemRow, type JobStore } from './db.js';
import type { BatchRequest } from './request.js';
import type { ResultItem } from './results.js';

/** The job as the runner starts it. */
export interface RunnableJob {
  id: string;
  request: BatchRequest;
  /** `<token>/<session>`, or undefined when this home cannot give it (then `folderError` says why). */
  folder: string | undefined;
  folderError?: string;
  expiresAt: string;
  created: string | null;
  /** A runner got this job going before (interrupted): no early end for a cancel or an expiry, it finalizes. */
  started: boolean;
  cancelRequested: boolean;
}

export type ActiveState = 'VALIDATING' | 'IN_PROGRESS' | 'FINALIZING';

export interface JobChannel {
  /** The job, or undefined when it is final already (nothing to do). */
  open(): Promise<RunnableJob | undefined>;
  /** Reports the state; false when the job meanwhile ended (a cancel before it started): the runner stops. */
  setState(state: ActiveState): Promise<boolean>;
  setBackend(label: string, modelFile: string): Promise<void>;
  /** Stores the inputs once (`load` runs only when none are stored: a resumed job keeps its first list). */
  ensureInputs(load: () => Promise<unknown[]>): Promise<void>;
  /** Every input's item, in input order; PENDING ones are still to generate. */
  items(): Promise<ResultItem[]>;
  /** Counts a generation attempt (the embedded home shows them; resumes are proven with them). */
  startItem(idx: number): Promise<void>;
  /** Commits one outcome durably, once. */
  commit(idx: number, outcome: ItemOutcome): Promise<void>;
  /** Fixes the result files' stem once; later calls answer the first (a resumed job rewrites the same objects). */
  fixResultStem(proposed: string): Promise<string>;
  /** Finished items not yet in a partial file, and the number the next part takes (1 when none was written). */
  unflushed(): Promise<{ items: ResultItem[]; part: number }>;
  /** Records that `idxs` were written to part `part` (after the write: a crash in between rewrites the part). */
  markFlushed(idxs: number[], part: number): Promise<void>;
  cancelRequested(): Promise<boolean>;
  /** Ends the job with the committed counts. */
  finish(state: FinalState, error?: string): Promise<void>;
}

/** A stored item as the result files show it. */
export const resultItem = (it: ItemRow): ResultItem => ({
  index: it.idx, custom_id: it.custom_id, input: JSON.parse(it.input), status: it.status,
  output: it.output === null ? null : JSON.parse(it.output), error: it.error, prompt_tokens: it.prompt_tokens, completion_tokens: it.completion_tokens,
});

/** The embedded home's channel: one job's rows in the job DB. */
export class SqliteJobChannel implements JobChannel {
  constructor(private store: JobStore, private secrets: JobSecrets, private id: string) {}

  async open(): Promise<RunnableJob | undefined> {
    const job = this.store.get(this.id);
    if (!job || FINAL_STATES.includes(job.status)) return undefined;
    const folder = job.folder_sealed ? this.secrets.open(job.folder_sealed, job.id) : undefined;
    return {
      id: job.id, request: JSON.parse(job.request) as BatchRequest, folder, expiresAt: job.expires_at, created: job.created,
      started: job.total !== null, cancelRequested: job.cancel_requested === 1,
      ...(folder ? {} : { folderError: "the job's bucket folder cannot be unsealed (was ENCRYPTION_KEY or <dataDir>/encryption.key changed?)" }),
    };
  }

  async setState(state: ActiveState): Promise<boolean> {
    this.store.setState(this.id, state);
    return !FINAL_STATES.includes(this.store.status(this.id)!.status);
  }

  async setBackend(label: string, modelFile: string): Promise<void> { this.store.setBackend(this.id, label, modelFile); }

  async ensureInputs(load: () => Promise<unknown[]>): Promise<void> {
    if (this.store.status(this.id)!.total === null) this.store.insertItems(this.id, await load());
  }

  async items(): Promise<ResultItem[]> { return this.store.items(this.id).map(resultItem); }

  async startItem(idx: number): Promise<void> { this.store.startItem(this.id, idx); }

  async commit(idx: number, outcome: ItemOutcome): Promise<void> { this.store.finishItem(this.id, idx, outcome); }

  async fixResultStem(proposed: string): Promise<string> {
    return this.store.resultStem(this.id, { stem: proposed, file: `${proposed}.json` }).stem;
  }

  async unflushed(): Promise<{ items: ResultItem[]; part: number }> {
    const { items, part } = this.store.unflushed(this.id);
    return { items: items.map(resultItem), part };
  }

  async markFlushed(idxs: number[], part: number): Promise<void> { this.store.markFlushed(this.id, idxs, part); }

  async cancelRequested(): Promise<boolean> { return this.store.cancelRequested(this.id); }

  async finish(state: FinalState, error?: string): Promise<void> { this.store.finish(this.id, state, error); }
}
