// Label values, annotations and object names the cluster stores add beside names.ts: label-safe values, the flow
// namespace hash label, and the names of done-once marks (ConfigMaps).
import { createHash } from 'node:crypto';
import { GROUP, LABELS, MANAGER } from '../names.js';

const sha256 = (s: string): string => createHash('sha256').update(s).digest('hex');

/** Label values: ≤ 63 chars, alphanumeric at both ends, [-_.A-Za-z0-9] inside. */
const LABEL_VALUE_RE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

/** `s` itself when it is a valid label value, else `h-` + a hash of it (so selection by label stays possible). */
export function labelValue(s: string): string {
  return s.length <= 63 && LABEL_VALUE_RE.test(s) ? s : `h-${sha256(s).slice(0, 40)}`;
}

/** Value of the flow-namespace-hash label (flow namespaces may be longer than a label value allows). */
export const namespaceHash = (namespace: string): string => sha256(namespace).slice(0, 40);

/** Labels identifying the flow of an object (executions, flow revisions). */
export function flowLabels(namespace: string, flowId: string): Record<string, string> {
  return {
    [LABELS.managedBy]: MANAGER,
    [LABELS.flowId]: labelValue(flowId),
    [LABELS.flowNamespaceHash]: namespaceHash(namespace),
  };
}

export const ANNOTATIONS = {
  /** Execution: the exact execution id (the label holds it too when it is a valid label value, else a hash). */
  executionId: `${GROUP}/execution-id`,
  /** Execution: the initial record as JSON (all but spec.inputs and spec.trigger), written at creation. */
  initialRecord: `${GROUP}/initial-record`,
  /** Execution: the same, gzip+base64, when large. */
  initialRecordGz: `${GROUP}/initial-record-gz`,
  /** Execution: the initial record is written to status right after creation; invisible until then. */
  statusPending: `${GROUP}/status-pending`,
  /** FlowRevision: when the revision was saved (ISO, milliseconds). */
  updated: `${GROUP}/updated`,
} as const;

export const MARK_LABEL = `${GROUP}/mark-scope`;

/** ConfigMap name of a done-once mark: a full SHA-256 so that distinct (scope, key) pairs never share a name. */
export const markName = (scope: string, key: string): string => `mark-${sha256(`${scope}\u0000${key}`).slice(0, 56)}`;
