// Tables for reading task Jobs and Pods: finished or not, the attempt key from labels, failure messages, stuck Pods,
// and the outcome chosen from the runner's result versus the Job status.
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { RUNNER_FAILURE_EXIT_CODE } from './attempt-io.js';
import { ANNOTATIONS, jobLabels } from './job-spec.js';
import { attemptKeyOf, jobFinish, outcomeOfJob, podFailure, podStuck } from './job-status.js';

const cond = (type: string, reason?: string, status = 'True') => ({ type, status, ...(reason ? { reason } : {}) });
const job = (status: V1Job['status'], deadline?: number): V1Job => ({
  metadata: { name: 'task-abc-1', annotations: { [ANNOTATIONS.taskId]: 't1' } },
  spec: { template: {}, ...(deadline ? { activeDeadlineSeconds: deadline } : {}) },
  status,
});
const pod = (status: V1Pod['status']): V1Pod => ({ metadata: { name: 'task-abc-1-xyz12' }, status });

describe('jobFinish', () => {
  it.each([
    ['running', { active: 1 }, undefined],
    ['Complete condition', { succeeded: 1, conditions: [cond('SuccessCriteriaMet'), cond('Complete')] }, { kind: 'complete' }],
    ['succeeded without conditions yet', { succeeded: 1, active: 0 }, { kind: 'complete' }],
    ['Failed condition', { failed: 1, conditions: [cond('Failed', 'BackoffLimitExceeded')] }, { kind: 'failed', reason: 'BackoffLimitExceeded' }],
    ['FailureTarget only (pods still terminating)', { failed: 1, conditions: [cond('FailureTarget', 'DeadlineExceeded')] }, undefined],
    ['condition False', { conditions: [cond('Complete', undefined, 'False')] }, undefined],
  ])('%s', (_n, status, expected) => {
    expect(jobFinish(job(status as V1Job['status']))).toEqual(expected);
  });
});

describe('attemptKeyOf', () => {
  it('reads the labels the Job builder sets', () => {
    expect(attemptKeyOf({ metadata: { labels: jobLabels('E1', 'T1', 3) } })).toEqual({ executionId: 'E1', taskRunId: 'T1', attempt: 3 });
  });
  it.each([{}, { metadata: { labels: { ...jobLabels('E1', 'T1', 1), 'flowpilot.io/attempt': 'x' } } }])('ignores foreign objects %#', (o) => {
    expect(attemptKeyOf(o)).toBeUndefined();
  });
});

describe('podFailure and podStuck', () => {
  const term = (exitCode: number, reason?: string, message?: string) => ({ name: 'task', image: 'i', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode, ...(reason ? { reason } : {}), ...(message ? { message } : {}) } } });
  it.each([
    ['OOM', pod({ containerStatuses: [term(137, 'OOMKilled')] }), /'task'.*OOMKilled/],
    ['exit code with the runner\'s last words', pod({ containerStatuses: [term(1, 'Error', 'runner failed: no input')] }), /exited with code 1: runner failed: no input/],
    ['init container', pod({ initContainerStatuses: [{ ...term(2, 'Error'), name: 'install-runner' }] }), /'install-runner'.*code 2/],
    ['evicted', pod({ phase: 'Failed', reason: 'Evicted', message: 'low on memory' }), /Evicted \(low on memory\)/],
  ])('%s', (_n, p, msg) => {
    expect(podFailure(p)).toMatch(msg);
  });
  it('is undefined for a clean exit', () => expect(podFailure(pod({ containerStatuses: [term(0, 'Completed')] }))).toBeUndefined());

  const waiting = (reason: string) => pod({ containerStatuses: [{ name: 'task', image: 'bad:1', imageID: '', ready: false, restartCount: 0, state: { waiting: { reason, message: 'nope' } } }] });
  it.each([['ImagePullBackOff', true], ['InvalidImageName', true], ['ErrImagePull', false], ['ContainerCreating', false]])('%s stuck: %s', (reason, stuck) => {
    expect(podStuck(waiting(reason)) !== undefined).toBe(stuck);
  });
  it('names the image', () => expect(podStuck(waiting('ImagePullBackOff'))).toMatch(/bad:1.*ImagePullBackOff: nope/));
});

describe('outcomeOfJob', () => {
  const result = { state: 'SUCCESS' as const, outputs: { a: 1 } };
  const mainTerm = (exitCode: number, message?: string) => ({ name: 'task', image: 'i', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode, reason: 'Error', ...(message ? { message } : {}) } } });
  const runnerPod = pod({ containerStatuses: [mainTerm(RUNNER_FAILURE_EXIT_CODE, 'The runner failed: listing KV pairs: still failing after 2000 ms (RUNNER_START_TIMEOUT_MS = 2000): 503\n')] });
  const infraResult = { state: 'FAILED' as const, infrastructure: true, error: 'The runner failed: x' };
  const failedPod = pod({ containerStatuses: [{ name: 'task', image: 'i', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode: 137, reason: 'OOMKilled' } } }] });
  it.each([
    ['complete with result', { kind: 'complete' as const }, result, [], result],
    // The defect of a runner that gave up at start and exited 0: an infrastructure failure (a new attempt), not the task's.
    ['complete without result: infrastructure', { kind: 'complete' as const }, undefined, [], { state: 'FAILED', infrastructure: true, error: "The runner of task 't1' exited without writing a result" }],
    ['the runner reported its own failure in its result', { kind: 'failed' as const, reason: 'BackoffLimitExceeded' }, infraResult, [runnerPod], infraResult],
    ['failed with the runner\'s exit code, no result: infrastructure with its termination message', { kind: 'failed' as const, reason: 'BackoffLimitExceeded' }, undefined, [runnerPod],
      { state: 'FAILED', infrastructure: true, error: "Task 't1': The runner failed: listing KV pairs: still failing after 2000 ms (RUNNER_START_TIMEOUT_MS = 2000): 503" }],
    ['the runner\'s exit code without a message', { kind: 'failed' as const, reason: 'BackoffLimitExceeded' }, undefined, [pod({ containerStatuses: [mainTerm(RUNNER_FAILURE_EXIT_CODE)] })],
      { state: 'FAILED', infrastructure: true, error: expect.stringMatching(/failed \(exit code 75\) without a message/) }],
    ['exit code 75 of an init container is not the runner\'s report', { kind: 'failed' as const, reason: 'BackoffLimitExceeded' }, undefined, [pod({ initContainerStatuses: [{ ...mainTerm(RUNNER_FAILURE_EXIT_CODE, 'x'), name: 'install-runner' }] })],
      { state: 'FAILED', error: expect.stringMatching(/'install-runner'.*code 75/) }],
    ['failed, result written (runner crashed after)', { kind: 'failed' as const, reason: 'BackoffLimitExceeded' }, { state: 'FAILED' as const, error: 'x' }, [], { state: 'FAILED', error: 'x' }],
    ['deadline beats a KILLED result', { kind: 'failed' as const, reason: 'DeadlineExceeded' }, { state: 'KILLED' as const }, [], { state: 'FAILED', error: expect.stringMatching(/'t1' timed out.*\(5s\)/) }],
    ['failed, OOM pod', { kind: 'failed' as const, reason: 'BackoffLimitExceeded' }, undefined, [failedPod], { state: 'FAILED', error: expect.stringMatching(/OOMKilled/) }],
    ['failed, no pods', { kind: 'failed' as const, reason: 'BackoffLimitExceeded', message: 'limit' }, undefined, [], { state: 'FAILED', error: expect.stringMatching(/BackoffLimitExceeded: limit/) }],
  ])('%s', (_n, finish, res, pods, expected) => {
    expect(outcomeOfJob(job({}, 5), finish, res, pods)).toEqual(expected);
  });
});
