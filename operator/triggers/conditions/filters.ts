// Execution filters of Flow trigger `preconditions.where` (Kestra's ExecutionFilters semantics): each filter checks
// one field (FLOW_ID, NAMESPACE, STATE, EXPRESSION rendered, LABEL as `key` or `key:value`) with an operator, and a
// `where` entry combines its filters with AND (default) or OR.
import { regexTest } from '../../expr/index.js';
import type { ExecutionView } from '../../core/execution-conditions.js';
import { ConditionError } from './dates.js';

export const FILTER_FIELDS = ['FLOW_ID', 'NAMESPACE', 'STATE', 'EXPRESSION', 'LABEL'] as const;
export const FILTER_TYPES = [
  'EQUAL_TO', 'NOT_EQUAL_TO', 'IN', 'NOT_IN', 'IS_TRUE', 'IS_FALSE', 'IS_NULL', 'IS_NOT_NULL', 'STARTS_WITH', 'ENDS_WITH', 'REGEX', 'CONTAINS',
] as const;
type FilterType = (typeof FILTER_TYPES)[number];

export interface ExecutionFilter { field: unknown; type: unknown; value?: unknown; values?: unknown }

const truthyText = (v: string | null): boolean => {
  if (v === null) return false;
  const s = v.trim().toLowerCase();
  return !(s === '' || s === 'false' || s === '0' || s === 'null');
};

function fieldValue(exec: ExecutionView, f: ExecutionFilter, renderExpression: (template: string) => string): string | null {
  switch (String(f.field).toUpperCase()) {
    case 'FLOW_ID': return exec.flowId;
    case 'NAMESPACE': return exec.namespace;
    case 'STATE': return exec.state.current;
    case 'EXPRESSION': return renderExpression(String(f.value ?? ''));
    case 'LABEL': {
      const wanted = String(f.value ?? '');
      const key = wanted.includes(':') ? wanted.slice(0, wanted.indexOf(':')) : wanted;
      const label = (exec.labels ?? []).find((l) => l.key === key);
      return label ? `${label.key}:${label.value}` : null;
    }
    default: throw new ConditionError(`\`${String(f.field)}\` is not one of ${FILTER_FIELDS.join(', ')}`);
  }
}

const OPS: Record<FilterType, (actual: string | null, value: string, values: string[]) => boolean> = {
  EQUAL_TO: (a, v) => a === v,
  NOT_EQUAL_TO: (a, v) => a !== v,
  IN: (a, _v, vs) => a !== null && vs.includes(a),
  NOT_IN: (a, _v, vs) => a === null || !vs.includes(a),
  IS_TRUE: (a) => truthyText(a),
  IS_FALSE: (a) => !truthyText(a),
  IS_NULL: (a) => a === null,
  IS_NOT_NULL: (a) => a !== null,
  STARTS_WITH: (a, v) => a !== null && a.startsWith(v),
  ENDS_WITH: (a, v) => a !== null && a.endsWith(v),
  REGEX: (a, v) => a !== null && regexTest(v, 'whole', 'REGEX').test(a), // Java's String.matches, on RE2 (linear time)
  CONTAINS: (a, v) => a !== null && a.includes(v),
};

export function filterMatches(exec: ExecutionView, f: ExecutionFilter, renderExpression: (template: string) => string): boolean {
  const type = String(f.type).toUpperCase() as FilterType;
  const op = OPS[type];
  if (!op) throw new ConditionError(`\`${String(f.type)}\` is not one of ${FILTER_TYPES.join(', ')}`);
  const values = Array.isArray(f.values) ? f.values.map(String) : f.values !== undefined ? [String(f.values)] : [];
  return op(fieldValue(exec, f, renderExpression), String(f.value ?? ''), values);
}

/** A `where` entry: its filters combined with `operand` AND (default) or OR. */
export function whereMatches(exec: ExecutionView, filters: ExecutionFilter[], operand: unknown, renderExpression: (t: string) => string): boolean {
  if (filters.length === 0) throw new ConditionError('a `where` entry needs `filters`');
  const or = String(operand ?? 'AND').toUpperCase() === 'OR';
  return or ? filters.some((f) => filterMatches(exec, f, renderExpression)) : filters.every((f) => filterMatches(exec, f, renderExpression));
}
