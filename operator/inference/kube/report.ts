// The runner's report channel in cluster mode: one small ConfigMap per InferenceJob (`<name>-report`, labelled, owned by
// the InferenceJob, created empty by the reconciler before the runner Job), whose `report` key the runner merge-patches
// with its state, counts, result stem and error. The reconciler watches these ConfigMaps and folds them into the
// InferenceJob's status (foldReport): it is the only writer of that status. The report outlives the runner's Pod, so an
// outcome reported just before the Pod exits is never lost.
import type { V1ConfigMap } from '@kubernetes/client-node';
import { inferenceJobName, LABELS } from '../../kube/names.js';
import { FINAL_STATES, type JobState } from '../db.js';
import { INFERENCE_MANAGER } from './job.js';
import { isFinal, TASK_ID_LABEL, type InferenceJobResource, type InferenceJobStatus } from './resource.js';

/** What a runner reports (every field cumulative: each patch carries the whole report). */
export interface RunnerReport {
  state?: JobState;
  total?: number; done?: number; failed?: number; promptTokens?: number; completionTokens?: number;
  backend?: string; modelFile?: string; resultStem?: string; error?: string;
  started?: string; finished?: string;
  /** The Pod that wrote it. */
  pod?: string;
}

export const REPORT_KEY = 'report';
export const reportName = (taskId: string): string => `${inferenceJobName(taskId)}-report`;

/** The empty report ConfigMap of a job, owned by it (the reconciler creates it before the runner Job). */
export function buildReportConfigMap(r: InferenceJobResource, taskId: string): V1ConfigMap {
  return {
    apiVersion: 'v1', kind: 'ConfigMap',
    metadata: {
      name: reportName(taskId), labels: { [LABELS.managedBy]: INFERENCE_MANAGER, [TASK_ID_LABEL]: taskId },
      ownerReferences: [{ apiVersion: r.apiVersion, kind: r.kind, name: r.metadata.name, uid: r.metadata.uid!, controller: true, blockOwnerDeletion: true }],
    },
    data: {},
  };
}

/** The report in a ConfigMap; undefined when there is none yet or it is not a report (never trusted beyond its fields). */
export function reportOf(cm: V1ConfigMap | undefined): RunnerReport | undefined {
  const text = cm?.data?.[REPORT_KEY];
  if (!text) return undefined;
  try {
    const v = JSON.parse(text) as unknown;
    return v && typeof v === 'object' && !Array.isArray(v) ? v as RunnerReport : undefined;
  } catch { return undefined; }
}

const STATES: readonly string[] = ['VALIDATING', 'IN_PROGRESS', 'FINALIZING', 'CANCELLING', ...FINAL_STATES];
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : undefined);
const text = (v: unknown): string | undefined => (typeof v === 'string' ? v.slice(0, 4096) : undefined);

/**
 * The status patch that folds `rep` into `current`, or undefined when nothing changes. Monotonic where it matters: a
 * final status is never changed (so RUNNING never follows CANCELLED, and a late or repeated report is ignored), and a
 * report without a known state changes nothing.
 */
export function foldReport(current: InferenceJobStatus | undefined, rep: RunnerReport): InferenceJobStatus | undefined {
  if (isFinal(current?.status) || typeof rep.state !== 'string' || !STATES.includes(rep.state)) return undefined;
  const final = FINAL_STATES.includes(rep.state);
  const stem = text(rep.resultStem);
  const next: InferenceJobStatus = {
    status: rep.state, total: num(rep.total), done: num(rep.done), failed: num(rep.failed),
    promptTokens: num(rep.promptTokens), completionTokens: num(rep.completionTokens),
    backend: text(rep.backend), modelFile: text(rep.modelFile), resultStem: stem,
    ...(final ? { resultFile: stem ? `${stem}.json` : undefined, error: text(rep.error), finished: text(rep.finished) ?? new Date().toISOString() } : {}),
    started: current?.started ?? text(rep.started),
  };
  const patch: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(next)) {
    if (v !== undefined && (current as Record<string, unknown> | undefined)?.[k] !== v) patch[k] = v;
  }
  return Object.keys(patch).length ? patch as InferenceJobStatus : undefined;
}
