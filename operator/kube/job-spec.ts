// The Kubernetes Job of one task attempt, built purely from the task and the launcher settings (no API calls), so the
// whole shape is table-tested. Two Pod layouts:
// - plain: one container in the runner image: `node /app/dist/runner-image/runner.js` (cwd /app, which holds
//   the app with its node_modules; `node` on the PATH).
// - Docker task runner (`taskRunner: {type: ...Docker, containerImage}`): the main container runs the task's image; an
//   init container in the runner image runs `runner.js install /flowpilot`, copying the node binary to
//   `/flowpilot/node/bin/node` and the app to `/flowpilot/app` in a shared emptyDir; the main container then runs
//   `/flowpilot/node/bin/node /flowpilot/app/dist/runner-image/runner.js` (cwd /flowpilot/app). The task image
//   needs a glibc userland (the node binary is dynamically linked), not a shell or node of its own.
// Task working directories go to an emptyDir at /work (WORK_DIR), so images with a read-only root still run.
import { ENV_VARS_PREFIX_SETTING, exposedEnvVars } from '../secrets/exposed-env.js';
import type { V1Container, V1EnvFromSource, V1EnvVar, V1Job, V1ResourceRequirements, V1Volume, V1VolumeMount } from '@kubernetes/client-node';
import type { Execution, Task, TaskRun } from '../core/types.js';
import { parseDuration } from '../model/duration.js';
import { normalizeType, PREFIX } from '../model/index.js';
import { TERMINATION_MESSAGE_ENV } from './attempt-io.js';
import { jobName, LABELS, MANAGER } from './names.js';

export type PullPolicy = 'Always' | 'IfNotPresent' | 'Never';

/**
 * Seconds a finished task Job (and its Pod) stays before Kubernetes deletes it (RUNNER_TTL_SECONDS_AFTER_FINISHED).
 * The operator settles an attempt as soon as its Job ends, and reads the result file again if asked after the Job
 * is gone, so the Job only serves `kubectl` inspection meanwhile; the cluster and the operator's Job/Pod caches hold
 * about (tasks finished per second) x this many of them.
 */
export const DEFAULT_JOB_TTL_SECONDS = 600;

export interface LauncherSettings {
  /** Image holding the app at /app (with node_modules) and `node` on the PATH. */
  runnerImage: string;
  imagePullPolicy?: PullPolicy;
  serviceAccountName?: string;
  /** Extra env for task pods (storage, log store settings...). */
  env?: Record<string, string> | V1EnvVar[];
  /** Extra env sources for task pods (e.g. a Secret of `SECRET_<NAME>` values). */
  envFrom?: V1EnvFromSource[];
  resources?: V1ResourceRequirements;
  /** Finished Jobs are garbage-collected after this long (default DEFAULT_JOB_TTL_SECONDS). */
  ttlSecondsAfterFinished?: number;
  /** Pod grace period between SIGTERM and SIGKILL (default 30). */
  terminationGracePeriodSeconds?: number;
  /** Added to a task's `timeout` for the Job's activeDeadlineSeconds (default 60: the engine's own timeout kills first). */
  deadlineMarginSeconds?: number;
  /** Non-root user of task containers (default 10001, the runner image's user). */
  runAsUser?: number;
}

export const ANNOTATIONS = {
  inputUri: 'flowpilot.io/input-uri',
  taskId: 'flowpilot.io/task-id',
  flowId: 'flowpilot.io/flow',
} as const;

export const RUNNER_LAYOUT = {
  appDir: '/app',
  /** Compiled by scripts/build.mjs (the image runs JavaScript: no TypeScript compile at every Pod start). */
  entry: 'dist/runner-image/runner.js',
  mount: '/flowpilot',
  node: '/flowpilot/node/bin/node',
  copiedApp: '/flowpilot/app',
  workDir: '/work',
} as const;

export const MAIN_CONTAINER = 'task';
/** Kubernetes' default terminationMessagePath, set explicitly: the runner is told it (TERMINATION_MESSAGE_PATH). */
export const TERMINATION_MESSAGE_PATH = '/dev/termination-log';
export const INIT_CONTAINER = 'install-runner';

const DOCKER_RUNNER = `${PREFIX}scripts.runner.docker.Docker`;

export const PULL_POLICIES: Record<'ALWAYS' | 'IF_NOT_PRESENT' | 'NEVER', PullPolicy> = {
  ALWAYS: 'Always', IF_NOT_PRESENT: 'IfNotPresent', NEVER: 'Never',
};

const isRecord = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v);

export interface DockerRunner { image: string; pullPolicy?: PullPolicy }

/** The task's Docker runner (image and pull policy), or undefined for a process runner / no runner. Throws when unusable. */
export function dockerRunnerOf(task: Task): DockerRunner | undefined {
  const runner = isRecord(task.taskRunner) ? task.taskRunner : undefined;
  const isDocker = (typeof runner?.type === 'string' && normalizeType(runner.type) === DOCKER_RUNNER)
    || String(task.runner ?? '').toUpperCase() === 'DOCKER';
  if (!isDocker) return undefined;
  const docker = isRecord(task.docker) ? task.docker : undefined;
  const image = task.containerImage ?? runner?.containerImage ?? runner?.image ?? docker?.image;
  if (typeof image !== 'string' || image.trim() === '') throw new Error(`Task '${task.id}': the Docker task runner needs a containerImage`);
  if (image.includes('{{')) throw new Error(`Task '${task.id}': a templated containerImage is not supported in cluster mode (${image})`);
  const policy = runner?.pullPolicy ?? docker?.pullPolicy;
  if (policy === undefined) return { image: image.trim() };
  const mapped = PULL_POLICIES[String(policy).toUpperCase() as keyof typeof PULL_POLICIES];
  if (!mapped) throw new Error(`Task '${task.id}': unknown pullPolicy '${String(policy)}' (ALWAYS, IF_NOT_PRESENT or NEVER)`);
  return { image: image.trim(), pullPolicy: mapped };
}

/** activeDeadlineSeconds for a task `timeout` (a literal ISO duration; templated or invalid ones give no deadline). */
export function deadlineSeconds(task: Task, marginSeconds: number): number | undefined {
  if (typeof task.timeout !== 'string' || task.timeout.includes('{{')) return undefined;
  let ms: number;
  try { ms = parseDuration(task.timeout); } catch { return undefined; }
  return Math.max(1, Math.ceil(ms / 1000) + marginSeconds);
}

export interface JobSpecInput {
  namespace: string;
  exec: Execution;
  run: TaskRun;
  attempt: number;
  /** The task with plugin defaults applied. */
  task: Task;
  inputUri: string;
  /** The Execution resource owning the Job (garbage collection with the execution). */
  owner?: { apiVersion: string; kind: string; name: string; uid: string };
  settings: LauncherSettings;
}

export function jobLabels(executionId: string, taskRunId: string, attempt: number): Record<string, string> {
  return { [LABELS.managedBy]: MANAGER, [LABELS.executionId]: executionId, [LABELS.taskRunId]: taskRunId, [LABELS.attempt]: String(attempt) };
}

/** Task Pods also get the variables FLOW_ENV_VARS_PREFIX exposes to templates (and the setting), so they render `envs` too. */
export function withExposedEnv(settings: LauncherSettings, env: NodeJS.ProcessEnv): LauncherSettings {
  const exposed = exposedEnvVars(env);
  if (Object.keys(exposed).length === 0) return settings;
  const vars = [{ name: ENV_VARS_PREFIX_SETTING, value: env[ENV_VARS_PREFIX_SETTING]! }, ...Object.entries(exposed).map(([name, value]) => ({ name, value }))];
  return { ...settings, env: [...extraEnv(settings.env), ...vars] };
}

function extraEnv(env: LauncherSettings['env']): V1EnvVar[] {
  if (!env) return [];
  return Array.isArray(env) ? env : Object.entries(env).map(([name, value]) => ({ name, value }));
}

export function buildJob(i: JobSpecInput): V1Job {
  const { exec, run, attempt, task, settings } = i;
  const docker = dockerRunnerOf(task);
  const labels = jobLabels(exec.id, run.id, attempt);
  const env: V1EnvVar[] = [
    { name: 'EXECUTION_ID', value: exec.id },
    { name: 'TASK_RUN_ID', value: run.id },
    { name: 'ATTEMPT', value: String(attempt) },
    { name: 'INPUT_URI', value: i.inputUri },
    { name: 'WORK_DIR', value: RUNNER_LAYOUT.workDir },
    { name: 'HOME', value: RUNNER_LAYOUT.workDir },
    // Where the runner writes the reason of its own failure (attempt-io.ts): the container's termination message.
    { name: TERMINATION_MESSAGE_ENV, value: TERMINATION_MESSAGE_PATH },
    ...extraEnv(settings.env),
  ];
  const workMount: V1VolumeMount = { name: 'work', mountPath: RUNNER_LAYOUT.workDir };
  const volumes: V1Volume[] = [{ name: 'work', emptyDir: {} }];
  const securityContext = { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } };
  const runnerArgs = (dir: string) => [`${dir}/${RUNNER_LAYOUT.entry}`];
  const main: V1Container = {
    name: MAIN_CONTAINER,
    image: docker?.image ?? settings.runnerImage,
    command: docker ? [RUNNER_LAYOUT.node, ...runnerArgs(RUNNER_LAYOUT.copiedApp)] : ['node', ...runnerArgs(RUNNER_LAYOUT.appDir)],
    workingDir: docker ? RUNNER_LAYOUT.copiedApp : RUNNER_LAYOUT.appDir,
    env,
    volumeMounts: [workMount],
    securityContext,
    // The runner's own failure is written to the termination message; without one, on a non-zero exit, the tail of
    // the output becomes the message.
    terminationMessagePath: TERMINATION_MESSAGE_PATH,
    terminationMessagePolicy: 'FallbackToLogsOnError',
  };
  const pullPolicy = docker ? docker.pullPolicy : settings.imagePullPolicy;
  if (pullPolicy) main.imagePullPolicy = pullPolicy;
  if (settings.envFrom?.length) main.envFrom = settings.envFrom;
  if (settings.resources) main.resources = settings.resources;
  const initContainers: V1Container[] = [];
  if (docker) {
    // Tells the script plugins they already run inside the task's image (no Docker engine needed or wanted).
    env.push({ name: 'FLOWPILOT_TASK_IMAGE', value: docker.image });
    volumes.push({ name: 'flowpilot', emptyDir: {} });
    main.volumeMounts!.push({ name: 'flowpilot', mountPath: RUNNER_LAYOUT.mount, readOnly: true });
    const init: V1Container = {
      name: INIT_CONTAINER,
      image: settings.runnerImage,
      command: ['node', ...runnerArgs(RUNNER_LAYOUT.appDir), 'install', RUNNER_LAYOUT.mount],
      workingDir: RUNNER_LAYOUT.appDir,
      env: extraEnv(settings.env),
      volumeMounts: [{ name: 'flowpilot', mountPath: RUNNER_LAYOUT.mount }],
      securityContext,
      terminationMessagePolicy: 'FallbackToLogsOnError',
    };
    if (settings.imagePullPolicy) init.imagePullPolicy = settings.imagePullPolicy;
    initContainers.push(init);
  }
  const deadline = deadlineSeconds(task, settings.deadlineMarginSeconds ?? 60);
  const user = settings.runAsUser ?? 10001;
  const job: V1Job = {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: jobName(exec.id, run.id, attempt),
      namespace: i.namespace,
      labels,
      annotations: { [ANNOTATIONS.inputUri]: i.inputUri, [ANNOTATIONS.taskId]: run.taskId, [ANNOTATIONS.flowId]: `${exec.namespace}.${exec.flowId}` },
      ...(i.owner ? { ownerReferences: [{ ...i.owner, controller: true, blockOwnerDeletion: true }] } : {}),
    },
    spec: {
      backoffLimit: 0,
      ttlSecondsAfterFinished: settings.ttlSecondsAfterFinished ?? DEFAULT_JOB_TTL_SECONDS,
      ...(deadline !== undefined ? { activeDeadlineSeconds: deadline } : {}),
      template: {
        metadata: { labels },
        spec: {
          restartPolicy: 'Never',
          terminationGracePeriodSeconds: settings.terminationGracePeriodSeconds ?? 30,
          automountServiceAccountToken: settings.serviceAccountName !== undefined,
          ...(settings.serviceAccountName ? { serviceAccountName: settings.serviceAccountName } : {}),
          securityContext: { runAsNonRoot: true, runAsUser: user, runAsGroup: user, fsGroup: user, seccompProfile: { type: 'RuntimeDefault' } },
          ...(initContainers.length ? { initContainers } : {}),
          containers: [main],
          volumes,
        },
      },
    },
  };
  return job;
}
