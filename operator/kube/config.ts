// Cluster-mode settings from the environment the Helm chart sets (docs/kubernetes.md lists every variable): where the
// resources live, the internal storage bucket, the log store, leader election, and the settings and env of the Pods the
// operator creates (task and inference runner Pods: credentials only as references to Secrets). Pure: env in, settings out.
import { hostname } from 'node:os';
import type { V1EnvVar } from '@kubernetes/client-node';
import { ENCRYPTION_KEY_ENV } from '../secrets/env.js';
import type { LauncherSettings, PullPolicy } from './job-spec.js';
import type { S3StorageOptions } from '../storage/s3.js';
import { partitionsFromEnv } from './partitioning.js';

export interface ClusterSettings {
  namespace: string;
  identity: string;
  leaderElection: { enabled: boolean; leaseName: string; leaseDurationSec: number; renewEverySec: number };
  /** OPERATOR_PARTITIONS: executions are spread over the replicas in this many partitions (with leader election). */
  partitions: number;
  metricsPort: number;
  storage: S3StorageOptions;
  logStoreUrl: string;
  secretsSecretName: string;
  /** Finished executions: archived to the log store's database, their resources deleted this long after their end. */
  executionTtlSeconds: number;
  /** Period of the leader's archive-and-delete pass over finished executions. */
  executionSweepIntervalMs: number;
}

/** A whole number ≥ `min` from `env[name]` (default when unset); anything else is refused naming the variable. */
function intSetting(env: NodeJS.ProcessEnv, name: string, def: number, min: number, what: string): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return def;
  const n = Number(raw.trim());
  if (!Number.isSafeInteger(n) || n < min) throw new Error(`${name} must be an integer >= ${min} (${what}), got '${raw}'`);
  return n;
}

function json<T>(env: NodeJS.ProcessEnv, name: string): T | undefined {
  const raw = env[name];
  if (!raw) return undefined;
  try { return JSON.parse(raw) as T; } catch { throw new Error(`${name} must be JSON: ${raw.slice(0, 80)}`); }
}

function required(env: NodeJS.ProcessEnv, name: string): string {
  const v = env[name];
  if (!v) throw new Error(`${name} is required in cluster mode (see docs/kubernetes.md)`);
  return v;
}

/** Environment of task Pods: what the runner needs to reach storage and the log store. */
const RUNNER_ENV = [
  'STORAGE_S3_ENDPOINT', 'STORAGE_S3_BUCKET', 'STORAGE_S3_REGION', 'STORAGE_S3_FORCE_PATH_STYLE', 'STORAGE_S3_PREFIX',
  'STORAGE_S3_ACCESS_KEY_ID', 'STORAGE_S3_SECRET_ACCESS_KEY', 'LOG_STORE_URL', 'WATCH_NAMESPACE',
  // What a task may reach beyond its own namespace (operator/tenancy), and the limits of rendering (core/limits.ts).
  'ALLOWED_NAMESPACES', 'EXPRESSION_TIMEOUT_MS', 'EXPRESSION_MAX_BYTES',
  // How long the runner retries its start and its result write (core/limits.ts).
  'RUNNER_START_TIMEOUT_MS',
  // Task type packages (operator/plugins/load.ts): the runner image must hold them too.
  'PLUGINS',
  // The server's public URL, the start of the execution links notifications send (plugins/notifications/summary.ts).
  'PUBLIC_URL',
  // Out-of-cluster runs (a laptop, the tests' simulated node): task Pods reach the API server the way the operator does.
  'KUBECONFIG',
];

/** The internal storage bucket from STORAGE_S3_* (the operator, the API and task Pods read the same variables). */
export function storageFromEnv(env: NodeJS.ProcessEnv): S3StorageOptions {
  return {
    endpoint: required(env, 'STORAGE_S3_ENDPOINT'),
    bucket: env.STORAGE_S3_BUCKET || 'flowpilot',
    ...(env.STORAGE_S3_REGION ? { region: env.STORAGE_S3_REGION } : {}),
    ...(env.STORAGE_S3_ACCESS_KEY_ID ? { accessKey: env.STORAGE_S3_ACCESS_KEY_ID } : {}),
    ...(env.STORAGE_S3_SECRET_ACCESS_KEY ? { secretKey: env.STORAGE_S3_SECRET_ACCESS_KEY } : {}),
    ...(env.STORAGE_S3_PREFIX ? { prefix: env.STORAGE_S3_PREFIX } : {}),
    pathStyle: env.STORAGE_S3_FORCE_PATH_STYLE !== 'false',
  };
}

/** Where a variable of task Pods comes from when it is a credential: a key of a Kubernetes Secret. */
export interface SecretKeyRef { name: string; key: string }

/** Names of variables holding a credential (keys, secrets, passwords, tokens); paths to files holding one are not. */
export function isCredentialName(name: string): boolean {
  return /(SECRET|PASSWORD|PASSWD|TOKEN|API_KEY|ACCESS_KEY|PRIVATE_KEY|CREDENTIAL)/.test(name) && !/_(FILE|PATH|DIR)$/.test(name);
}

/** Fields of a JSON setting (INFERENCE_CONFIG) that hold credentials. */
const CREDENTIAL_FIELDS = /^(secretAccessKey|accessKeyId|sessionToken|apiKey|password|token)$/;

/** Where the value of `name` is a credential: by name, a URL with a password, or JSON carrying credential fields. */
function credentialIn(name: string, value: string): string | undefined {
  if (name === ENCRYPTION_KEY_ENV || isCredentialName(name)) return name;
  try { if (new URL(value).password) return `${name} (a URL with a password)`; } catch { /* not a URL */ }
  if (!value.trim().startsWith('{')) return undefined;
  let found: string | undefined;
  const walk = (v: unknown, path: string): void => {
    if (found || !v || typeof v !== 'object') return;
    for (const [k, x] of Object.entries(v)) {
      if (CREDENTIAL_FIELDS.test(k) && typeof x === 'string' && x) { found = `${name} (${path}${k})`; return; }
      walk(x, `${path}${k}.`);
    }
  };
  try { walk(JSON.parse(value), ''); } catch { /* not JSON */ }
  return found;
}

/** RUNNER_ENV_FROM_SECRETS: JSON `{VAR: {name, key}}` (the chart sets it), the Secrets the Pods' variables come from. */
export function envSecretRefs(env: NodeJS.ProcessEnv): Record<string, SecretKeyRef> {
  const refs = json<Record<string, SecretKeyRef>>(env, 'RUNNER_ENV_FROM_SECRETS') ?? {};
  if (typeof refs !== 'object' || Array.isArray(refs)) throw new Error('RUNNER_ENV_FROM_SECRETS must be a JSON object {VAR: {name, key}}');
  return refs;
}

/**
 * The env the operator gives Pods it creates, for the variables `names`: a variable listed in RUNNER_ENV_FROM_SECRETS
 * is a reference to its Secret; another one is copied from this process, unless it holds a credential: then this
 * throws, naming the variable, so a credential never becomes a literal of a Job spec. ENCRYPTION_KEY is never copied.
 */
export function podEnvFor(env: NodeJS.ProcessEnv, names: string[], refs = envSecretRefs(env)): V1EnvVar[] {
  const out: V1EnvVar[] = [];
  for (const name of names) {
    const ref = Object.hasOwn(refs, name) ? refs[name] : undefined;
    if (ref?.name && ref.key) { out.push({ name, valueFrom: { secretKeyRef: { name: ref.name, key: ref.key } } }); continue; }
    const value = env[name];
    if (value === undefined || name === ENCRYPTION_KEY_ENV) continue;
    const credential = credentialIn(name, value);
    if (credential) {
      throw new Error(`${credential} holds a credential, which Pods the operator creates would get as a literal in their Job spec: `
        + `set it from a Secret and name that Secret in RUNNER_ENV_FROM_SECRETS ({"${name}": {"name": "<secret>", "key": "<key>"}}; `
        + 'the Helm chart does this, see docs/kubernetes.md "Secrets")');
    }
    out.push({ name, value });
  }
  return out;
}

/**
 * Timing of the operator's Leases (leader and partitions): LEADER_ELECTION_LEASE_DURATION_SECONDS (default 15, how long
 * a dead replica keeps its work) and LEADER_ELECTION_RENEW_SECONDS (default 5, below 2/3 of the duration, when a holder
 * that cannot renew steps down).
 */
export function leaseTimingFromEnv(env: NodeJS.ProcessEnv): { leaseDurationSec: number; renewEverySec: number } {
  const num = (name: string, fallback: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const n = Number(raw);
    if (!Number.isFinite(n) || n <= 0) throw new Error(`${name} must be a positive number of seconds, got '${raw}'`);
    return n;
  };
  const leaseDurationSec = num('LEADER_ELECTION_LEASE_DURATION_SECONDS', 15);
  if (!Number.isInteger(leaseDurationSec) || leaseDurationSec < 2 || leaseDurationSec > 300) {
    throw new Error(`LEADER_ELECTION_LEASE_DURATION_SECONDS must be a whole number of seconds from 2 to 300, got '${env.LEADER_ELECTION_LEASE_DURATION_SECONDS}'`);
  }
  const renewEverySec = num('LEADER_ELECTION_RENEW_SECONDS', Math.min(5, leaseDurationSec / 3));
  if (renewEverySec >= (leaseDurationSec * 2) / 3) {
    throw new Error(`LEADER_ELECTION_RENEW_SECONDS (${renewEverySec}) must be below 2/3 of LEADER_ELECTION_LEASE_DURATION_SECONDS (${leaseDurationSec})`);
  }
  return { leaseDurationSec, renewEverySec };
}

/** RUNNER_TTL_SECONDS_AFTER_FINISHED: a whole number of seconds (0: deleted as soon as finished). */
function jobTtl(raw: string): number {
  const n = Number(raw.trim());
  if (raw.trim() === '' || !Number.isSafeInteger(n) || n < 0) {
    throw new Error(`RUNNER_TTL_SECONDS_AFTER_FINISHED must be an integer >= 0 (seconds a finished task Job is kept), got '${raw}'`);
  }
  return n;
}

/**
 * The env of task Pods: what the runner needs to reach storage and the log store (credentials by reference only, see
 * podEnvFor), and WATCH_NAMESPACE.
 */
export function runnerEnv(env: NodeJS.ProcessEnv, namespace: string): V1EnvVar[] {
  return [...podEnvFor(env, [...RUNNER_ENV.filter((n) => n !== 'WATCH_NAMESPACE'), ENCRYPTION_KEY_ENV]), { name: 'WATCH_NAMESPACE', value: namespace }];
}

/** Variables of the operator passed to batch inference runner Pods (models, bucket access, limits). */
export const INFERENCE_ENV = /^(INFERENCE_|S3_|AWS_|GCS_)/;

/** The env of inference runner Pods: every INFERENCE_/S3_/AWS_/GCS_ variable, credentials by reference only. */
export function inferenceRunnerEnv(env: NodeJS.ProcessEnv, namespace: string): V1EnvVar[] {
  const own = new Set(['INFERENCE_JOB_NAME', 'INFERENCE_ACCESS_TOKEN']); // set by the runner Job itself (job.ts)
  const names = Object.keys(env).filter((n) => INFERENCE_ENV.test(n) && !own.has(n) && env[n] !== undefined).sort();
  return [...podEnvFor(env, names), { name: 'WATCH_NAMESPACE', value: namespace }];
}

/** Image, ServiceAccount, resources and env of task Pods (throws when a credential would be a literal of a Job). */
export function loadLauncherSettings(env: NodeJS.ProcessEnv, namespace: string): LauncherSettings {
  const pull = env.RUNNER_IMAGE_PULL_POLICY as PullPolicy | undefined;
  return {
    runnerImage: env.RUNNER_IMAGE || 'ghcr.io/flowpilot/flowpilot-runner:0.1.0',
    ...(pull ? { imagePullPolicy: pull } : {}),
    ...(env.RUNNER_SERVICE_ACCOUNT ? { serviceAccountName: env.RUNNER_SERVICE_ACCOUNT } : {}),
    ...(json(env, 'RUNNER_RESOURCES') ? { resources: json(env, 'RUNNER_RESOURCES') } : {}),
    ...(env.RUNNER_TTL_SECONDS_AFTER_FINISHED ? { ttlSecondsAfterFinished: jobTtl(env.RUNNER_TTL_SECONDS_AFTER_FINISHED) } : {}),
    env: runnerEnv(env, namespace),
  };
}

export function loadClusterSettings(env: NodeJS.ProcessEnv): ClusterSettings {
  const namespace = env.WATCH_NAMESPACE || env.POD_NAMESPACE || 'default';
  return {
    namespace,
    identity: env.POD_NAME || `${hostname()}-${process.pid}`,
    leaderElection: { enabled: env.LEADER_ELECTION_ENABLED !== 'false', leaseName: env.LEADER_ELECTION_LEASE_NAME || 'flowpilot-operator', ...leaseTimingFromEnv(env) },
    partitions: partitionsFromEnv(env),
    metricsPort: Number(env.METRICS_PORT ?? 9090),
    storage: storageFromEnv(env),
    logStoreUrl: required(env, 'LOG_STORE_URL'),
    secretsSecretName: env.SECRETS_SECRET_NAME || 'flowpilot-secrets',
    executionTtlSeconds: intSetting(env, 'EXECUTION_TTL_SECONDS', 3600, 0,
      'seconds a finished Execution resource is kept after its end once archived; 0 deletes it as soon as archived'),
    executionSweepIntervalMs: intSetting(env, 'EXECUTION_SWEEP_INTERVAL_MS', 30_000, 100,
      'interval of the pass that archives finished executions and deletes expired resources, in milliseconds'),
  };
}
