// The job store of the batch inference service, one interface for both homes (like the flow stores): the embedded
// SQLite adapter below (over db.ts) and the custom-resource adapter (kube/store.ts, InferenceJob resources). The
// service (service.ts) submits, reads, lists and cancels through it; runners report through their job channel
// (channel.ts), never through this interface.
import type { JobSecrets } from './auth.js';
import { FINAL_STATES, type JobState, type JobStore, type JobSummary } from './db.js';
import type { BatchRequest } from './request.js';

/** What the service shows of a job (the `get_result` view is computed from it). */
export interface JobRecord {
  id: string;
  /** The owner's token as stored: a keyed hash (an unkeyed SHA-256 in cluster resources of earlier versions). */
  token_hash: string;
  request_hash: string;
  session: string;
  status: JobState;
  total: number | null; done: number; failed: number;
  prompt_tokens: number; completion_tokens: number;
  result_stem: string | null; result_file: string | null;
  error: string | null; backend: string | null; model_file: string | null;
  created: string; started: string | null; finished: string | null; expires_at: string;
  /** From the request. */
  model: string; bucket_name: string; return_output: boolean;
}

/** A new job as the service validated it. */
export interface NewJob {
  id: string;
  /** The caller's token: the adapters keep it only sealed (SQLite) or in a Secret (cluster), never in clear in a record. */
  token: string;
  tokenHash: string;
  idempotencyKey: string | null;
  requestHash: string;
  request: BatchRequest;
  /** When it was submitted (the cluster adapter keeps the resource's creationTimestamp, to the second). */
  created: string;
  /** End of its completion window: `created` plus the window. */
  expiresAt: string;
}

export type JobOutputs = { index: number; output: unknown; error?: string }[];

export interface InferenceJobStore {
  /** Creates the job unless the same owner already used its idempotency key: then the existing one, `created: false`. */
  create(job: NewJob): Promise<{ job: JobRecord; created: boolean }>;
  get(id: string): Promise<JobRecord | undefined>;
  /**
   * One owner's jobs, newest first, `limit` after the job `after`. `ownerHashes`: the stored forms of the owner's token
   * (the keyed hash first; an adapter may hold older forms too).
   */
  list(ownerHashes: readonly string[], limit: number, after?: string): Promise<{ jobs: JobRecord[]; hasMore: boolean }>;
  /** Records the owner's cancel; returns the job after it (QUEUED jobs without a runner may end CANCELLED at once). */
  requestCancel(id: string): Promise<JobRecord | undefined>;
  /** The outputs of a finished job (`return_output`), undefined when they cannot be read. */
  outputs(job: JobRecord): Promise<JobOutputs | undefined>;
}

/** The request fields a view shows; parsed once per job, not on every poll (the request holds every input). */
interface RequestSummary { model: string; bucket_name: string; return_output: boolean }
const SUMMARY_CACHE = 1000;

/** The embedded home: jobs and items in SQLite (db.ts). */
export class SqliteInferenceJobStore implements InferenceJobStore {
  private summaries = new Map<string, RequestSummary>();

  constructor(readonly db: JobStore, private secrets: JobSecrets) {}

  private record(j: JobSummary): JobRecord {
    let s = this.summaries.get(j.id);
    if (!s) {
      const req = JSON.parse(this.db.request(j.id) ?? '{}') as BatchRequest;
      s = { model: req.model, bucket_name: req.bucket_name, return_output: req.return_output === true };
      if (this.summaries.size >= SUMMARY_CACHE) this.summaries.delete(this.summaries.keys().next().value!);
      this.summaries.set(j.id, s);
    }
    return {
      id: j.id, token_hash: j.token_hash, request_hash: j.request_hash, session: j.session, status: j.status,
      total: j.total, done: j.done, failed: j.failed, prompt_tokens: j.prompt_tokens, completion_tokens: j.completion_tokens,
      result_stem: j.result_stem, result_file: j.result_file, error: j.error, backend: j.backend, model_file: j.model_file,
      created: j.created, started: j.started, finished: j.finished, expires_at: j.expires_at, ...s,
    };
  }

  async create(job: NewJob): Promise<{ job: JobRecord; created: boolean }> {
    const { row, created } = this.db.create({
      id: job.id, token_hash: job.tokenHash, idempotency_key: job.idempotencyKey, request_hash: job.requestHash,
      request: JSON.stringify(job.request), folder_sealed: this.secrets.seal(`${job.token}/${job.request.session}`, job.id),
      session: job.request.session, created: job.created, expires_at: job.expiresAt,
    });
    return { job: this.record(row), created };
  }

  async get(id: string): Promise<JobRecord | undefined> {
    const j = this.db.status(id);
    return j && this.record(j);
  }

  /** Every row holds the keyed hash (migration 1 re-keyed older ones): the first form is enough. */
  async list(ownerHashes: readonly string[], limit: number, after?: string): Promise<{ jobs: JobRecord[]; hasMore: boolean }> {
    const { jobs, hasMore } = this.db.list(ownerHashes[0]!, limit, after);
    return { jobs: jobs.map((j) => this.record(j)), hasMore };
  }

  async requestCancel(id: string): Promise<JobRecord | undefined> {
    this.db.requestCancel(id);
    return this.get(id);
  }

  async outputs(job: JobRecord): Promise<JobOutputs | undefined> {
    if (job.total === null || !FINAL_STATES.includes(job.status)) return undefined;
    return this.db.items(job.id).map((it) => ({
      index: it.idx, output: it.output === null ? null : JSON.parse(it.output), ...(it.error ? { error: it.error } : {}),
    }));
  }
}
