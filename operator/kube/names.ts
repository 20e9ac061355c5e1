// Kubernetes names shared by the CRDs, the operator, the cluster stores, the runner and the tests: the API group,
// the kinds, and deterministic object names (Kubernetes names are lowercase DNS labels; our ids are mixed-case base62).
import { createHash } from 'node:crypto';

export const GROUP = 'flowpilot.io';
export const VERSION = 'v1';
export const API_VERSION = `${GROUP}/${VERSION}`;

export interface KindInfo { kind: string; plural: string; singular: string; shortNames: string[] }

export const KINDS = {
  Flow: { kind: 'Flow', plural: 'flows', singular: 'flow', shortNames: ['fl'] },
  /** Immutable, one per saved revision of a Flow (created by the store / operator, never edited). */
  FlowRevision: { kind: 'FlowRevision', plural: 'flowrevisions', singular: 'flowrevision', shortNames: ['flrev'] },
  Execution: { kind: 'Execution', plural: 'executions', singular: 'execution', shortNames: ['fex'] },
  KVPair: { kind: 'KVPair', plural: 'kvpairs', singular: 'kvpair', shortNames: ['kv'] },
  /** A flow namespace as a thing (Kestra's Namespace): description, variables and plugin defaults its flows inherit. */
  FlowNamespace: { kind: 'FlowNamespace', plural: 'flownamespaces', singular: 'flownamespace', shortNames: ['fns'] },
  /** Durable trigger state (schedule progress, backfill, MultipleCondition windows). */
  TriggerState: { kind: 'TriggerState', plural: 'triggerstates', singular: 'triggerstate', shortNames: ['trs'] },
  /** A batch inference job (POST /v1/completions in cluster mode). */
  InferenceJob: { kind: 'InferenceJob', plural: 'inferencejobs', singular: 'inferencejob', shortNames: ['ij'] },
} as const satisfies Record<string, KindInfo>;

/** Labels and annotations we set. Label values must be ≤ 63 chars of [A-Za-z0-9_.-]. */
export const LABELS = {
  managedBy: 'app.kubernetes.io/managed-by',
  executionId: `${GROUP}/execution-id`,
  taskRunId: `${GROUP}/task-run-id`,
  attempt: `${GROUP}/attempt`,
  flowId: `${GROUP}/flow-id`,
  flowNamespaceHash: `${GROUP}/flow-namespace-hash`,
  /** Execution: its record is in the history database (set by the sweeper; the executions informer leaves it out). */
  archived: `${GROUP}/archived`,
} as const;
export const MANAGER = 'flowpilot-operator';
/** Prefix of the env variables the flow-secrets Secret becomes in task Pods (envFrom; values verbatim). */
export { POD_SECRET_PREFIX } from '../secrets/env.js';

const hash = (s: string, n: number): string => createHash('sha256').update(s).digest('hex').slice(0, n);

/** A lowercase DNS-label-safe slug of `s` (≤ `max` chars), suffixed with a hash of the original so names never collide. */
export function slugName(prefix: string, s: string, max = 63): string {
  const h = hash(s, 10);
  const slug = s.toLowerCase().replace(/[^a-z0-9-]+/g, '-').replace(/^-+|-+$/g, '');
  const room = max - prefix.length - h.length - 2;
  const body = slug.slice(0, Math.max(0, room)).replace(/-+$/g, '');
  return `${prefix}-${body ? `${body}-` : ''}${h}`;
}

/** Execution resource name for an execution id (deterministic, reversible through the execution-id label). */
export const executionName = (executionId: string): string => slugName('ex', executionId);
/** Flow resource name for a flow created through the API (kubectl users choose their own names). */
export const flowName = (namespace: string, id: string): string => slugName('fl', `${namespace}.${id}`);
export const flowRevisionName = (flowResourceName: string, revision: number): string => `${flowResourceName}-r${revision}`.slice(0, 253);
export const kvName = (namespace: string, key: string): string => slugName('kv', `${namespace}/${key}`);
export const flowNamespaceName = (namespace: string): string => slugName('ns', namespace);
export const triggerStateName = (namespace: string, flowId: string, triggerId: string): string => slugName('tr', `${namespace}.${flowId}.${triggerId}`);
/** Job name of one attempt of a task run: the same inputs always give the same name, so a restart finds its Job. */
export const jobName = (executionId: string, taskRunId: string, attempt: number): string => `task-${hash(`${executionId}/${taskRunId}/${attempt}`, 20)}-${attempt}`;
export const inferenceJobName = (taskId: string): string => slugName('ij', taskId);
