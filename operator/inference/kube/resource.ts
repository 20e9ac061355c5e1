// InferenceJob custom resources ↔ the batch inference service: the resource's shape, the request kept in its spec (never
// the access token: only its hash and a reference to the Secret holding it), the deterministic names derived from a
// task id, and the `get_result` view computed from the resource's status.
import { createHash } from 'node:crypto';
import { API_VERSION, GROUP, inferenceJobName, KINDS, LABELS, MANAGER } from '../../kube/names.js';
import type { ObjectMeta } from '../../kube/store/kube-api.js';
import type { BatchRequest } from '../request.js';
import { resultFiles } from '../results.js';
import type { JobResultView } from '../service.js';

export type InferenceJobStatusName = 'QUEUED' | 'RUNNING' | 'SUCCESS' | 'FAILED' | 'CANCELLED';

export interface InferenceJobSpec extends Omit<BatchRequest, 'return_output'> {
  return_output?: boolean;
  tokenHash: string;
  tokenSecretRef?: { name: string; key: string };
  idempotencyKey?: string;
  requestHash: string;
  /** The owner asked to cancel (the runner or, before a runner exists, the reconciler ends the job CANCELLED). */
  cancelRequested?: boolean;
}

export interface InferenceJobStatus {
  status?: InferenceJobStatusName;
  total?: number; done?: number; failed?: number;
  promptTokens?: number; completionTokens?: number;
  backend?: string; error?: string; resultPaths?: string[];
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

export const isFinal = (s: InferenceJobStatusName | undefined): boolean => s === 'SUCCESS' || s === 'FAILED' || s === 'CANCELLED';

/** Uid of the InferenceJob a token Secret was made for (the operator adopts the Secret only for that owner). */
export const TOKEN_OWNER_ANNOTATION = `${GROUP}/inference-job-uid`;

/** Secret holding a job's access token (adopted by the InferenceJob's reconciler, so it goes with it). */
export const tokenSecretName = (taskId: string): string => `${inferenceJobName(taskId)}-token`;
/** The Kubernetes Job running an InferenceJob (one per job; Pod retries happen inside it). */
export const runnerJobName = (taskId: string): string => `${inferenceJobName(taskId)}-run`;

/**
 * Task id of a submission with an Idempotency-Key: derived from the token and the key, so every API replica maps a
 * repeated submission to the same resource, and nobody without the token can compute it (still 128 unguessable bits).
 */
export const idempotentTaskId = (token: string, key: string): string =>
  createHash('sha256').update(`flowpilot-inference\0${token}\0${key}`).digest('hex').slice(0, 32);

export function taskIdOf(r: InferenceJobResource): string | undefined { return r.metadata.labels?.[TASK_ID_LABEL]; }

export const resourceLabels = (taskId: string): Record<string, string> => ({ [LABELS.managedBy]: MANAGER, [TASK_ID_LABEL]: taskId });

/** The InferenceJob of a validated request (drops undefined fields: the schema has no nulls). */
export function buildInferenceJob(taskId: string, req: BatchRequest, extra: { tokenHash: string; requestHash: string; idempotencyKey?: string }): InferenceJobResource {
  const spec: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(req)) if (v !== undefined) spec[k] = v;
  Object.assign(spec, {
    tokenHash: extra.tokenHash, requestHash: extra.requestHash,
    tokenSecretRef: { name: tokenSecretName(taskId), key: TOKEN_KEY },
    ...(extra.idempotencyKey ? { idempotencyKey: extra.idempotencyKey } : {}),
  });
  return {
    apiVersion: API_VERSION, kind: KINDS.InferenceJob.kind,
    metadata: { name: inferenceJobName(taskId), labels: resourceLabels(taskId) },
    spec: spec as unknown as InferenceJobSpec,
  };
}

/** The request a runner executes, back from the spec. */
export function requestOf(spec: InferenceJobSpec): BatchRequest {
  const { tokenHash: _h, tokenSecretRef: _s, idempotencyKey: _k, requestHash: _r, cancelRequested: _c, ...req } = spec;
  return { ...req, storage_provider: req.storage_provider ?? 's3', return_output: req.return_output === true } as BatchRequest;
}

const iso = (d: unknown): string => (d instanceof Date ? d.toISOString() : typeof d === 'string' ? d : new Date(0).toISOString());

/** The `get_result` view of a resource (`result_key` included; the caller removes it for non-owners). */
export function viewOf(r: InferenceJobResource): JobResultView {
  const s = r.status ?? {};
  const status = (s.status === 'CANCELLED' ? 'FAILED' : s.status ?? 'QUEUED') as JobResultView['status'];
  const final = status === 'SUCCESS' || status === 'FAILED';
  const key = final ? s.resultPaths?.[0] ?? null : null;
  const prompt = s.promptTokens ?? 0, completion = s.completionTokens ?? 0;
  const v: JobResultView = {
    task_id: taskIdOf(r) ?? r.metadata.name, status, model: r.spec.model, backend: s.backend ?? null,
    state: s.status === 'CANCELLED' ? 'CANCELLED' : r.spec.cancelRequested && !final ? 'CANCELLING' : status === 'RUNNING' ? 'IN_PROGRESS' : status,
    progress: { total: s.total ?? null, done: s.done ?? 0, failed: s.failed ?? 0 },
    tokens: { prompt, completion, total: prompt + completion },
    bucket: r.spec.bucket_name, result_key: key,
    // The key is `<token>/<session>/<file>`: the file name is what follows the session segment.
    result_file: key ? key.slice(key.indexOf(`/${r.spec.session}/`) + r.spec.session.length + 2) : null,
    created: iso(r.metadata.creationTimestamp), started: s.started ?? null, finished: s.finished ?? null,
  };
  if (v.result_file) {
    const f = resultFiles(v.result_file.replace(/\.json$/, ''));
    v.files = { output: f.output, errors: f.errors, manifest: f.manifest };
  }
  if (s.error) v.error = s.error;
  return v;
}
