// Reading a task Job and its Pods, purely: is the Job finished and how, why did it fail when the runner left no
// result (deadline, OOM, exit code, the runner's last words), and is a Pod stuck for good (image pull errors). A runner
// that exited without a result, or with RUNNER_FAILURE_EXIT_CODE, is an infrastructure failure: a new attempt.
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import type { TaskOutcome } from '../core/engine-types.js';
import { RUNNER_FAILURE_EXIT_CODE } from './attempt-io.js';
import { ANNOTATIONS, MAIN_CONTAINER } from './job-spec.js';
import { LABELS } from './names.js';

export type JobFinish = { kind: 'complete' } | { kind: 'failed'; reason?: string; message?: string } | undefined;

const condition = (job: V1Job, type: string) => job.status?.conditions?.find((c) => c.type === type && c.status === 'True');

export function jobFinish(job: V1Job): JobFinish {
  if (condition(job, 'Complete')) return { kind: 'complete' };
  const failed = condition(job, 'Failed');
  if (failed) return { kind: 'failed', ...(failed.reason ? { reason: failed.reason } : {}), ...(failed.message ? { message: failed.message } : {}) };
  if ((job.status?.succeeded ?? 0) > 0 && !job.status?.active) return { kind: 'complete' };
  return undefined;
}

export interface AttemptKey { executionId: string; taskRunId: string; attempt: number }

/** The attempt a Job or Pod belongs to, from its labels. */
export function attemptKeyOf(obj: { metadata?: { labels?: Record<string, string> } }): AttemptKey | undefined {
  const l = obj.metadata?.labels ?? {};
  const attempt = Number(l[LABELS.attempt]);
  const executionId = l[LABELS.executionId];
  const taskRunId = l[LABELS.taskRunId];
  if (!executionId || !taskRunId || !Number.isInteger(attempt) || attempt < 1) return undefined;
  return { executionId, taskRunId, attempt };
}

/** Why the main container (or an init container) of a Pod ended, in words. */
export function podFailure(pod: V1Pod): string | undefined {
  const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
  for (const s of statuses) {
    const t = s.state?.terminated;
    if (t && t.exitCode !== 0) {
      const what = t.reason === 'OOMKilled' ? 'was OOMKilled (out of memory)' : `exited with code ${t.exitCode}${t.reason && t.reason !== 'Error' ? ` (${t.reason})` : ''}`;
      const tail = t.message?.trim() ? `: ${t.message.trim().slice(-2000)}` : '';
      return `Container '${s.name}' of pod ${pod.metadata?.name ?? '?'} ${what}${tail}`;
    }
  }
  if (pod.status?.reason) return `Pod ${pod.metadata?.name ?? '?'} failed: ${pod.status.reason}${pod.status.message ? ` (${pod.status.message})` : ''}`;
  return undefined;
}

/** The reason a runner gave for its own failure (its exit code says so; the reason is its termination message). */
export function runnerFailure(pod: V1Pod): string | undefined {
  const main = pod.status?.containerStatuses?.find((s) => s.name === MAIN_CONTAINER);
  const t = main?.state?.terminated;
  if (t?.exitCode !== RUNNER_FAILURE_EXIT_CODE) return undefined;
  return t.message?.trim() ? t.message.trim().slice(-2000) : `the runner of pod ${pod.metadata?.name ?? '?'} failed (exit code ${t.exitCode}) without a message`;
}

/** Waiting reasons after which a Pod will not start without someone changing something. */
const STUCK = new Set(['ImagePullBackOff', 'InvalidImageName', 'ErrImageNeverPull', 'CreateContainerConfigError', 'CreateContainerError']);

/** A message when a Pod of the attempt is stuck for good (the Job itself would wait until its deadline). */
export function podStuck(pod: V1Pod): string | undefined {
  const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
  for (const s of statuses) {
    const w = s.state?.waiting;
    if (w?.reason && STUCK.has(w.reason)) return `Task pod cannot start: container '${s.name}' (image ${s.image ?? '?'}) ${w.reason}${w.message ? `: ${w.message}` : ''}`;
  }
  return undefined;
}

/**
 * The outcome of a finished Job: a timeout when it ran past its deadline, else the runner's result when it wrote one
 * (an infrastructure failure when the runner reported its own), else an infrastructure failure when the runner exited
 * without a result (exit 0: Complete) or said it failed itself (RUNNER_FAILURE_EXIT_CODE), else a failure built from
 * the Job's condition and its Pods' container states.
 */
export function outcomeOfJob(job: V1Job, finish: NonNullable<JobFinish>, result: TaskOutcome | undefined, pods: V1Pod[]): TaskOutcome {
  const taskId = job.metadata?.annotations?.[ANNOTATIONS.taskId] ?? '?';
  // Past the deadline the runner is stopped with SIGTERM and may have written KILLED: the attempt timed out.
  if (finish.kind === 'failed' && finish.reason === 'DeadlineExceeded') {
    return { state: 'FAILED', error: `Task '${taskId}' timed out: its Job ran past activeDeadlineSeconds (${job.spec?.activeDeadlineSeconds ?? '?'}s)` };
  }
  if (result) return result;
  if (finish.kind === 'complete') return { state: 'FAILED', infrastructure: true, error: `The runner of task '${taskId}' exited without writing a result` };
  const runner = pods.map(runnerFailure).find((m) => m !== undefined);
  if (runner) return { state: 'FAILED', infrastructure: true, error: `Task '${taskId}': ${runner}` };
  const why = pods.map(podFailure).find((m) => m !== undefined);
  if (why) return { state: 'FAILED', error: `Task '${taskId}' failed: ${why}` };
  return { state: 'FAILED', error: `Task '${taskId}' failed: Job ${job.metadata?.name ?? '?'} failed${finish.reason ? ` (${finish.reason}${finish.message ? `: ${finish.message}` : ''})` : ''}` };
}
