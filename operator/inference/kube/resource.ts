// InferenceJob custom resources ↔ the batch inference service: the resource's shape, the request kept in its spec (never
// the access token: only its hash and a reference to the Secret holding it), the deterministic names derived from a
// task id, and the job record (store.ts) read from the resource.
import { API_VERSION, GROUP, inferenceJobName, KINDS, LABELS, MANAGER } from '../../kube/names.js';
import type { ObjectMeta } from '../../kube/store/kube-api.js';
import type { BatchRequest } from '../request.js';
import { FINAL_STATES, type JobState } from '../db.js';
import type { JobRecord } from '../store.js';

/** The lifecycle state (db.ts JobState), or RUNNING as resources of earlier versions hold it. */
export type InferenceJobStatusName = JobState | 'RUNNING';

export interface InferenceJobSpec extends Omit<BatchRequest, 'return_output'> {
  return_output?: boolean;
  /** Keyed hash of the owner's token (auth.ts JobSecrets); an unkeyed SHA-256 in resources of earlier versions. */
  tokenHash: string;
  tokenSecretRef?: { name: string; key: string };
  /** `<token>/<session>` sealed under ENCRYPTION_KEY, bound to the task id (the API reads return_output results with it). */
  folderSealed?: string;
  idempotencyKey?: string;
  requestHash: string;
  /** End of the completion window (RFC 3339; absent in resources of earlier versions: no window). */
  expiresAt?: string;
  /** The owner asked to cancel (the runner or, before a runner exists, the reconciler ends the job CANCELLED). */
  cancelRequested?: boolean;
}

/** Written by the reconciler only (from the runner's report, report.ts, and from the runner Job's outcome). */
export interface InferenceJobStatus {
  status?: InferenceJobStatusName;
  total?: number; done?: number; failed?: number;
  promptTokens?: number; completionTokens?: number;
  backend?: string; modelFile?: string; error?: string;
  resultStem?: string; resultFile?: string;
  /** Object keys of the result file, as versions before the one job model wrote them (they begin with the token). */
  resultPaths?: string[];
  started?: string; finished?: string; observedGeneration?: number; message?: string;
}

export interface InferenceJobResource {
  apiVersion: string; kind: string;
  metadata: ObjectMeta;
  spec: InferenceJobSpec;
  status?: InferenceJobStatus;
}

/** Label holding the task id on the InferenceJob, its token Secret and its Job (the resource name is a hash of it). */
export const TASK_ID_LABEL = `${GROUP}/inference-task-id`;
/** Key of the access token in the job's Secret. */
export const TOKEN_KEY = 'token';
export const PLURAL = KINDS.InferenceJob.plural;

export const isFinal = (s: InferenceJobStatusName | undefined): boolean => s !== undefined && s !== 'RUNNING' && FINAL_STATES.includes(s);

/** Uid of the InferenceJob a token Secret was made for (the operator adopts the Secret only for that owner). */
export const TOKEN_OWNER_ANNOTATION = `${GROUP}/inference-job-uid`;

/** Secret holding a job's access token (adopted by the InferenceJob's reconciler, so it goes with it). */
export const tokenSecretName = (taskId: string): string => `${inferenceJobName(taskId)}-token`;
/** The Kubernetes Job running an InferenceJob (one per job; Pod retries happen inside it). */
export const runnerJobName = (taskId: string): string => `${inferenceJobName(taskId)}-run`;

export function taskIdOf(r: InferenceJobResource): string | undefined { return r.metadata.labels?.[TASK_ID_LABEL]; }

export const resourceLabels = (taskId: string): Record<string, string> => ({ [LABELS.managedBy]: MANAGER, [TASK_ID_LABEL]: taskId });

/** The InferenceJob of a validated request (drops undefined fields: the schema has no nulls). */
export function buildInferenceJob(taskId: string, req: BatchRequest, extra: { tokenHash: string; requestHash: string; idempotencyKey?: string; expiresAt?: string; folderSealed?: string }): InferenceJobResource {
  const spec: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(req)) if (v !== undefined) spec[k] = v;
  Object.assign(spec, {
    tokenHash: extra.tokenHash, requestHash: extra.requestHash,
    tokenSecretRef: { name: tokenSecretName(taskId), key: TOKEN_KEY },
    ...(extra.idempotencyKey ? { idempotencyKey: extra.idempotencyKey } : {}),
    ...(extra.expiresAt ? { expiresAt: extra.expiresAt } : {}),
    ...(extra.folderSealed ? { folderSealed: extra.folderSealed } : {}),
  });
  return {
    apiVersion: API_VERSION, kind: KINDS.InferenceJob.kind,
    metadata: { name: inferenceJobName(taskId), labels: resourceLabels(taskId) },
    spec: spec as unknown as InferenceJobSpec,
  };
}

/** The request a runner executes, back from the spec. */
export function requestOf(spec: InferenceJobSpec): BatchRequest {
  const { tokenHash: _h, tokenSecretRef: _s, idempotencyKey: _k, requestHash: _r, cancelRequested: _c, expiresAt: _e, folderSealed: _f, ...req } = spec;
  return { ...req, storage_provider: req.storage_provider ?? 's3', return_output: req.return_output === true } as BatchRequest;
}

const iso = (d: unknown): string => (d instanceof Date ? d.toISOString() : typeof d === 'string' ? d : new Date(0).toISOString());
/** Jobs of earlier versions have no completion window. */
const NO_WINDOW = '9999-12-31T00:00:00.000Z';

/** The job record (store.ts) of a resource: what `get_result`, the list and the cancel show. */
export function recordOf(r: InferenceJobResource): JobRecord {
  const s = r.status ?? {};
  let state: JobState = s.status === 'RUNNING' ? 'IN_PROGRESS' : s.status ?? 'QUEUED';
  if (r.spec.cancelRequested && !FINAL_STATES.includes(state)) state = 'CANCELLING';
  // Earlier versions recorded the result file's full key (`<token>/<session>/<file>`): the file is what follows the session.
  const legacyKey = s.resultPaths?.[0];
  const file = s.resultFile ?? (legacyKey ? legacyKey.slice(legacyKey.indexOf(`/${r.spec.session}/`) + r.spec.session.length + 2) : null);
  return {
    id: taskIdOf(r) ?? r.metadata.name, token_hash: r.spec.tokenHash, request_hash: r.spec.requestHash, session: r.spec.session, status: state,
    total: s.total ?? null, done: s.done ?? 0, failed: s.failed ?? 0, prompt_tokens: s.promptTokens ?? 0, completion_tokens: s.completionTokens ?? 0,
    result_stem: s.resultStem ?? (file ? file.replace(/\.json$/, '') : null), result_file: file,
    error: s.error ?? null, backend: s.backend ?? null, model_file: s.modelFile ?? null,
    created: iso(r.metadata.creationTimestamp), started: s.started ?? null, finished: s.finished ?? null, expires_at: r.spec.expiresAt ?? NO_WINDOW,
    model: r.spec.model, bucket_name: r.spec.bucket_name, return_output: r.spec.return_output === true,
  };
}
