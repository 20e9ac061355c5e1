// Execution records ⇄ Execution custom resources: the spec written at creation (what to run, commands), the
// status the operator writes (summary fields + the whole record, gzip+base64 when large), and decoding back.
import { gunzipSync, gzip, gzipSync } from 'node:zlib';
import { promisify } from 'node:util';
import { type Execution, type ExecutionState, isTerminal } from '../../core/types.js';
import { formatDuration } from '../../model/duration.js';
import type { ExecutionCommand, PendingCommand } from '../../store/types.js';
import { LABELS, executionName } from '../names.js';
import type { KubeObject } from './kube-api.js';
import { ANNOTATIONS, flowLabels, labelValue } from './labels.js';

const gzipAsync = promisify(gzip);

/** Records whose JSON is larger than this are stored compressed (etcd objects must stay under ~1.5 MiB). */
export const RECORD_GZ_THRESHOLD = 256 * 1024;
/** Initial records larger than this are gzipped in their annotation (a replay can copy thousands of task runs). */
const INITIAL_GZ_ABOVE = 32 * 1024;
/** Past this even compressed, the initial record goes to status instead (annotations total ≤ 256 KiB). */
const INITIAL_ANNOTATION_MAX = 128 * 1024;

export interface CommandSpec {
  seq: number; type: ExecutionCommand['type']; inputs?: Record<string, unknown>; labels?: { key: string; value: string }[];
  state?: string; created?: string;
}

export interface ExecutionSpec {
  namespace: string;
  flowId: string;
  flowRevision?: number;
  inputs?: Record<string, unknown>;
  labels?: { key: string; value: string }[];
  trigger?: Record<string, unknown>;
  parent?: Record<string, unknown>;
  commands?: CommandSpec[];
}

export interface ExecutionStatus {
  state?: ExecutionState;
  /** The flow revision the execution runs (spec.flowRevision, or the latest one bound at start when spec has none). */
  flowRevision?: number;
  startDate?: string;
  endDate?: string;
  duration?: string;
  taskRunCount?: number;
  record?: Execution;
  recordGz?: string;
  acked?: number;
  observedGeneration?: number;
  message?: string;
}

export type ExecutionObject = KubeObject<ExecutionSpec, ExecutionStatus>;

/** The execution id of a resource: its execution-id annotation or label, else (created by hand) its name. */
export const executionIdOf = (obj: ExecutionObject): string =>
  obj.metadata.annotations?.[ANNOTATIONS.executionId] ?? obj.metadata.labels?.[LABELS.executionId] ?? obj.metadata.name;

/**
 * The resource `create` posts. The initial record rides in an annotation (spec has no room for state, dates,
 * task runs of a replay...); when it is too large, `statusPending` says the record follows in status.
 */
export function executionResource(execution: Execution): { body: Omit<ExecutionObject, 'apiVersion' | 'kind'>; needsStatus: boolean } {
  // inputs and trigger live in spec (a webhook body can be large): the annotation holds the rest, once.
  const { inputs, trigger: _trigger, ...rest } = execution;
  const initial = encodeInitial(rest);
  const needsStatus = initial.value.length > INITIAL_ANNOTATION_MAX;
  const spec: ExecutionSpec = {
    namespace: execution.namespace,
    flowId: execution.flowId,
    flowRevision: execution.flowRevision,
    inputs: inputs ?? {},
    labels: (execution.labels ?? []).map((l) => ({ key: String(l.key), value: String(l.value) })),
    commands: [],
  };
  if (execution.trigger) spec.trigger = JSON.parse(JSON.stringify(execution.trigger)) as Record<string, unknown>;
  if (execution.parent) spec.parent = { ...execution.parent };
  if (!(spec.flowRevision! >= 1)) delete spec.flowRevision;
  return {
    body: {
      metadata: {
        name: executionName(execution.id),
        labels: { ...flowLabels(execution.namespace, execution.flowId), [LABELS.executionId]: labelValue(execution.id) },
        annotations: {
          [ANNOTATIONS.executionId]: execution.id,
          ...(needsStatus ? { [ANNOTATIONS.statusPending]: 'true' } : { [initial.annotation]: initial.value }),
        },
      },
      spec,
    },
    needsStatus,
  };
}

/** The initial record's annotation: JSON, or gzip+base64 JSON when large. */
function encodeInitial(rest: Omit<Execution, 'inputs' | 'trigger'>): { annotation: string; value: string } {
  const json = JSON.stringify(rest);
  if (json.length <= INITIAL_GZ_ABOVE) return { annotation: ANNOTATIONS.initialRecord, value: json };
  return { annotation: ANNOTATIONS.initialRecordGz, value: gzipSync(json).toString('base64') };
}

/** Compressed records above this size are compressed again at the best level (slower, a few % smaller). */
const RECOMPRESS_ABOVE = 1024 * 1024;
/** Past this, the object cannot be stored (etcd's limit is 1.5 MiB for the whole object). */
const RECORD_GZ_MAX = 1400 * 1024;

/** gzip+base64 of a record's JSON; a clear error when even that cannot fit in a Kubernetes object. */
async function compress(id: string, json: string): Promise<string> {
  const raw = Buffer.from(json);
  let gz = (await gzipAsync(raw)).toString('base64');
  if (gz.length > RECOMPRESS_ABOVE) gz = (await gzipAsync(raw, { level: 9, memLevel: 9 })).toString('base64');
  if (gz.length > RECORD_GZ_MAX) {
    throw new Error(`Execution '${id}' record is too large for a Kubernetes object: ${raw.length} bytes of JSON, ${gz.length} compressed (limit about ${RECORD_GZ_MAX})`);
  }
  return gz;
}

/** Status for a record; `acked` is the last command seq consumed. */
export async function executionStatus(execution: Execution, acked: number, generation: number | undefined, now = new Date()): Promise<ExecutionStatus> {
  const start = execution.state.startDate;
  const end = execution.state.endDate;
  const status: ExecutionStatus = {
    state: execution.state.current,
    ...(execution.flowRevision >= 1 ? { flowRevision: execution.flowRevision } : {}),
    startDate: start,
    taskRunCount: execution.taskRunList?.length ?? 0,
    acked,
  };
  if (end) status.endDate = end;
  const startMs = Date.parse(start);
  const endMs = end ? Date.parse(end) : isTerminal(execution.state.current) ? startMs : now.getTime();
  if (Number.isFinite(startMs) && Number.isFinite(endMs)) status.duration = formatDuration(Math.max(0, endMs - startMs));
  if (generation !== undefined) status.observedGeneration = generation;
  if (execution.error) status.message = execution.error;
  const json = JSON.stringify(execution);
  if (json.length > RECORD_GZ_THRESHOLD) status.recordGz = await compress(execution.id, json);
  else status.record = JSON.parse(json) as Execution;
  return status;
}

/**
 * The record of a resource: status (operator-written), else the initial record; undefined while status is pending.
 * May share objects with the resource (status.record): callers clone before handing it out.
 */
export function decodeExecution(obj: ExecutionObject): Execution | undefined {
  const status = obj.status;
  if (status?.recordGz) return JSON.parse(gunzipSync(Buffer.from(status.recordGz, 'base64')).toString('utf8')) as Execution;
  if (status?.record) return status.record;
  const annotations = obj.metadata.annotations ?? {};
  if (annotations[ANNOTATIONS.statusPending]) return undefined;
  const spec = obj.spec;
  const gz = annotations[ANNOTATIONS.initialRecordGz];
  const initial = gz ? gunzipSync(Buffer.from(gz, 'base64')).toString('utf8') : annotations[ANNOTATIONS.initialRecord];
  if (initial) {
    const execution = { ...(JSON.parse(initial) as Omit<Execution, 'inputs'>), inputs: spec.inputs ?? {} } as Execution;
    if (spec.trigger && !execution.trigger) execution.trigger = spec.trigger as unknown as Execution['trigger'];
    return execution;
  }
  // Created by hand (kubectl): derive the record from the spec.
  const id = executionIdOf(obj);
  const date = obj.metadata.creationTimestamp ?? new Date().toISOString();
  const execution: Execution = {
    id, namespace: spec.namespace, flowId: spec.flowId, flowRevision: spec.flowRevision ?? 0,
    state: { current: 'CREATED', histories: [{ state: 'CREATED', date }], startDate: date },
    originalId: id, labels: (spec.labels ?? []).map((l) => ({ key: l.key, value: l.value })),
    inputs: spec.inputs ?? {}, taskRunList: [],
  };
  if (spec.trigger) execution.trigger = spec.trigger as unknown as Execution['trigger'];
  if (spec.parent) execution.parent = spec.parent as unknown as Execution['parent'];
  return execution;
}

export const ackedOf = (obj: ExecutionObject | undefined): number => obj?.status?.acked ?? 0;

/** Commands of the resource not yet consumed (seq > status.acked), oldest first. */
export function pendingOf(obj: ExecutionObject): PendingCommand[] {
  const acked = ackedOf(obj);
  const executionId = executionIdOf(obj);
  return (obj.spec.commands ?? []).filter((c) => c.seq > acked).sort((a, b) => a.seq - b.seq).map((c) => toPending(executionId, c));
}

export function toPending(executionId: string, c: CommandSpec): PendingCommand {
  const command = (c.type === 'resume' && c.inputs !== undefined ? { type: 'resume', inputs: c.inputs }
    : c.type === 'set-labels' ? { type: 'set-labels', labels: c.labels ?? [] }
      : c.type === 'change-state' ? { type: 'change-state', state: c.state }
        : { type: c.type }) as ExecutionCommand;
  return { seq: c.seq, executionId, command, created: c.created ?? '' };
}

export function commandSpec(seq: number, command: ExecutionCommand, created: string): CommandSpec {
  const spec: CommandSpec = { seq, type: command.type, created };
  if (command.type === 'resume' && command.inputs !== undefined) spec.inputs = command.inputs;
  if (command.type === 'set-labels') spec.labels = command.labels.map((l) => ({ key: l.key, value: l.value }));
  if (command.type === 'change-state') spec.state = command.state;
  return spec;
}
