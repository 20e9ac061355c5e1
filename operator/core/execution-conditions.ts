// Execution-based conditions as pure functions (ExecutionFlow, ExecutionNamespace, ExecutionLabels, ExecutionStatus):
// they look at the execution a Flow trigger reacts to, a webhook would create, or a flow listener ends.
import type { Execution, Label } from './types.js';

/** Thrown when a condition cannot be evaluated (bad property value); the evaluator reports it and answers false. */
export class ConditionError extends Error {
  constructor(message: string) { super(message); this.name = 'ConditionError'; }
}

export const NAMESPACE_COMPARISONS = ['EQUALS', 'PREFIX', 'SUFFIX'] as const;
export type NamespaceComparison = (typeof NAMESPACE_COMPARISONS)[number];

/** The parts of an execution the conditions read. */
export type ExecutionView = Pick<Execution, 'namespace' | 'flowId' | 'labels' | 'outputs'> & { state: { current: string } };

export function executionFlow(exec: ExecutionView, namespace: unknown, flowId: unknown): boolean {
  return exec.namespace === namespace && exec.flowId === flowId;
}

/** `comparison` defaults to EQUALS, or PREFIX when the legacy `prefix: true` is set. */
export function executionNamespace(exec: ExecutionView, namespace: unknown, comparison?: unknown, prefix?: unknown): boolean {
  if (typeof namespace !== 'string') throw new ConditionError('ExecutionNamespaceCondition needs `namespace`');
  const how = comparison === undefined || comparison === null ? (prefix === true ? 'PREFIX' : 'EQUALS') : String(comparison).toUpperCase();
  switch (how as NamespaceComparison) {
    case 'EQUALS': return exec.namespace === namespace;
    case 'PREFIX': return exec.namespace.startsWith(namespace);
    case 'SUFFIX': return exec.namespace.endsWith(namespace);
    default: throw new ConditionError(`\`${String(comparison)}\` is not one of ${NAMESPACE_COMPARISONS.join(', ')}`);
  }
}

/** Labels as a map or a list of {key, value}; values compared as strings. */
export function labelList(labels: unknown): Label[] {
  if (Array.isArray(labels)) {
    return labels.filter((l): l is Record<string, unknown> => !!l && typeof l === 'object')
      .map((l) => ({ key: String(l.key), value: String(l.value) }));
  }
  if (labels && typeof labels === 'object') return Object.entries(labels).map(([key, value]) => ({ key, value: String(value) }));
  return [];
}

/** Every wanted label is on the execution. */
export function executionLabels(exec: ExecutionView, labels: unknown): boolean {
  const wanted = labelList(labels);
  if (wanted.length === 0) throw new ConditionError('ExecutionLabelsCondition needs `labels`');
  const have = exec.labels ?? [];
  return wanted.every((w) => have.some((l) => l.key === w.key && String(l.value) === w.value));
}

const states = (v: unknown): string[] | undefined =>
  v === undefined || v === null ? undefined : (Array.isArray(v) ? v : [v]).map((s) => String(s).toUpperCase());

/** In `in` (when given) and not in `notIn` (when given). */
export function executionStatus(exec: ExecutionView, inStates?: unknown, notIn?: unknown): boolean {
  const current = exec.state.current;
  const yes = states(inStates);
  const no = states(notIn);
  return (!yes || yes.includes(current)) && (!no || !no.includes(current));
}
