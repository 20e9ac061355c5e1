// Kestra's search filters (`filters[field][OPERATION]=value`, QueryFilter): which fields each resource searches on and
// which operations each field takes, the parsed filter a store receives, and its two evaluations shared by every
// store: an in-memory predicate (cluster caches, triggers) and SQL over bind parameters (SQLite and PostgreSQL).
import { flowLabels } from '../core/execution.js';
import type { Execution, Flow, Label } from '../core/types.js';
import { regexTest } from '../expr/regex.js';

export const FilterOps = [
  'EQUALS', 'NOT_EQUALS', 'GREATER_THAN', 'LESS_THAN', 'GREATER_THAN_OR_EQUAL_TO', 'LESS_THAN_OR_EQUAL_TO',
  'IN', 'NOT_IN', 'STARTS_WITH', 'ENDS_WITH', 'CONTAINS', 'REGEX', 'PREFIX',
] as const;
export type FilterOp = (typeof FilterOps)[number];

const EQ = ['EQUALS', 'NOT_EQUALS'] as const;
const SETS = ['EQUALS', 'NOT_EQUALS', 'IN', 'NOT_IN'] as const;
const TEXT = ['EQUALS', 'NOT_EQUALS', 'CONTAINS', 'STARTS_WITH', 'ENDS_WITH', 'IN', 'NOT_IN'] as const;
const NAMES = [...TEXT, 'REGEX', 'PREFIX'] as const;
const DATES = ['GREATER_THAN_OR_EQUAL_TO', 'GREATER_THAN', 'LESS_THAN_OR_EQUAL_TO', 'LESS_THAN', 'EQUALS', 'NOT_EQUALS'] as const;

/** Kestra's QueryFilter.Field values and the operations each supports. */
export const FIELD_OPS = {
  q: EQ,
  scope: [...SETS],
  namespace: NAMES,
  kind: SETS,
  labels: ['EQUALS', 'NOT_EQUALS', 'IN', 'NOT_IN', 'CONTAINS'],
  flowId: NAMES,
  startDate: DATES,
  endDate: DATES,
  state: SETS,
  timeRange: ['EQUALS'],
  triggerExecutionId: TEXT,
  triggerId: TEXT,
  triggerState: EQ,
  executionId: TEXT,
  childFilter: EQ,
  workerId: TEXT,
  level: EQ,
} as const satisfies Record<string, readonly FilterOp[]>;
export type FilterField = keyof typeof FIELD_OPS;

export type SearchResource = 'executions' | 'flows' | 'logs' | 'triggers';

/** Kestra's QueryFilter.Resource: the fields each search takes. */
export const RESOURCE_FIELDS: Record<SearchResource, readonly FilterField[]> = {
  flows: ['labels', 'namespace', 'q', 'scope', 'flowId'],
  executions: ['q', 'scope', 'flowId', 'startDate', 'endDate', 'state', 'labels', 'triggerExecutionId', 'childFilter', 'namespace', 'kind', 'timeRange'],
  logs: ['q', 'scope', 'namespace', 'startDate', 'endDate', 'flowId', 'triggerId', 'level', 'executionId', 'timeRange'],
  triggers: ['q', 'scope', 'namespace', 'workerId', 'flowId', 'startDate', 'endDate', 'triggerId', 'triggerState'],
};

/** Fields compared as text (after the API has rewritten scope, timeRange, childFilter, triggerState and kind). */
export type TextField = 'namespace' | 'flowId' | 'state' | 'triggerExecutionId' | 'triggerId' | 'executionId' | 'workerId' | 'kind' | 'triggerState';
export type DateField = 'startDate' | 'endDate';
export type TextOp = 'EQUALS' | 'NOT_EQUALS' | 'IN' | 'NOT_IN' | 'STARTS_WITH' | 'ENDS_WITH' | 'CONTAINS' | 'REGEX' | 'PREFIX';
export type DateOp = (typeof DATES)[number];
export type LabelOp = 'EQUALS' | 'NOT_EQUALS' | 'IN' | 'NOT_IN' | 'CONTAINS';

/**
 * One validated filter as the stores see it. Text: `values` holds one value, or several for IN/NOT_IN. Dates: ISO.
 * Labels: `{key, value}` pairs; CONTAINS pairs may have an empty key (any key, text in the key or the value).
 * `present`: the field has a value at all (`childFilter`: the execution has a parent).
 */
export type SearchFilter =
  | { kind: 'text'; field: TextField; op: TextOp; values: string[] }
  | { kind: 'date'; field: DateField; op: DateOp; value: string }
  | { kind: 'labels'; op: LabelOp; labels: Label[] }
  | { kind: 'q'; op: 'EQUALS' | 'NOT_EQUALS'; value: string }
  | { kind: 'level'; op: 'EQUALS' | 'NOT_EQUALS'; value: number }
  | { kind: 'present'; field: TextField; present: boolean };

// ---------------------------------------------------------------------------------------------------------------
// In memory

/** What a record shows the filters: text fields, dates (ISO), labels, the texts `q` looks in, a level rank. */
export interface FilterRow {
  text: Partial<Record<TextField, string>>;
  dates?: Partial<Record<DateField, string>>;
  labels?: Label[];
  q?: string[];
  level?: number;
}

/** REGEX: the pattern found anywhere in the text, on RE2 (linear time; the API checked and bounded the pattern). */
export const regexFind = (pattern: string, text: string): boolean => regexTest(pattern, 'find').test(text);

function textMatches(op: TextOp, values: string[], v: string | undefined): boolean {
  const first = values[0] ?? '';
  switch (op) {
    case 'EQUALS': return v === first;
    case 'NOT_EQUALS': return v !== first;
    case 'IN': return v !== undefined && values.includes(v);
    case 'NOT_IN': return v === undefined || !values.includes(v);
    case 'STARTS_WITH': return v !== undefined && v.startsWith(first);
    case 'ENDS_WITH': return v !== undefined && v.endsWith(first);
    case 'CONTAINS': return v !== undefined && v.includes(first);
    case 'REGEX': return v !== undefined && regexFind(first, v);
    case 'PREFIX': return v !== undefined && (v === first || v.startsWith(`${first}.`));
  }
}

function dateMatches(op: DateOp, wanted: string, v: string | undefined): boolean {
  const a = v === undefined ? NaN : Date.parse(v);
  if (Number.isNaN(a)) return op === 'NOT_EQUALS';
  const b = Date.parse(wanted);
  switch (op) {
    case 'EQUALS': return a === b;
    case 'NOT_EQUALS': return a !== b;
    case 'GREATER_THAN': return a > b;
    case 'GREATER_THAN_OR_EQUAL_TO': return a >= b;
    case 'LESS_THAN': return a < b;
    case 'LESS_THAN_OR_EQUAL_TO': return a <= b;
  }
}

const hasLabel = (labels: Label[], l: Label): boolean => labels.some((x) => x.key === l.key && String(x.value) === l.value);
const labelContains = (labels: Label[], l: Label): boolean => labels.some((x) => (l.key === ''
  ? x.key.includes(l.value) || String(x.value).includes(l.value)
  : x.key === l.key && String(x.value).includes(l.value)));

function labelsMatch(op: LabelOp, wanted: Label[], labels: Label[]): boolean {
  switch (op) {
    case 'EQUALS': return wanted.every((l) => hasLabel(labels, l));
    case 'IN': return wanted.some((l) => hasLabel(labels, l));
    case 'NOT_EQUALS':
    case 'NOT_IN': return !wanted.some((l) => hasLabel(labels, l));
    case 'CONTAINS': return wanted.every((l) => labelContains(labels, l));
  }
}

/** Case-insensitive substring in any of the row's `q` texts (Kestra's `q` on executions, flows and triggers). */
const qMatches = (value: string, texts: string[]): boolean => {
  const needle = value.toLowerCase();
  return texts.some((t) => t.toLowerCase().includes(needle));
};

/** Every filter holds for the row. */
export function rowMatches(filters: readonly SearchFilter[], row: FilterRow): boolean {
  return filters.every((f) => {
    switch (f.kind) {
      case 'text': return textMatches(f.op, f.values, row.text[f.field]);
      case 'date': return dateMatches(f.op, f.value, row.dates?.[f.field]);
      case 'labels': return labelsMatch(f.op, f.labels, row.labels ?? []);
      case 'q': return qMatches(f.value, row.q ?? []) === (f.op === 'EQUALS');
      case 'level': return ((row.level ?? 0) >= f.value) === (f.op === 'EQUALS');
      case 'present': return (row.text[f.field] !== undefined) === f.present;
    }
  });
}

/** An execution as the filters see it (dates: the start date for both, as Kestra's; every execution is NORMAL). */
export function executionRow(e: Execution): FilterRow {
  const labels = (e.labels ?? []).map((l) => ({ key: l.key, value: String(l.value) }));
  return {
    text: { namespace: e.namespace, flowId: e.flowId, state: e.state.current, triggerExecutionId: e.parent?.executionId, kind: 'NORMAL' },
    dates: { startDate: e.state.startDate, endDate: e.state.startDate },
    labels,
    q: [e.id, e.namespace, e.flowId, ...labels.map((l) => `${l.key}:${l.value}`)],
  };
}

/** A flow as the filters see it (`q`: id, namespace and description). */
export function flowRow(flow: Flow): FilterRow {
  return {
    text: { namespace: flow.namespace, flowId: flow.id },
    labels: flowLabels(flow),
    q: [flow.id, flow.namespace, flow.description ?? ''],
  };
}

// ---------------------------------------------------------------------------------------------------------------
// SQL

/** The SQL spelling of the operations a filter needs; `param` registers a bind parameter and returns its placeholder. */
export interface SqlDialect {
  param(value: unknown): string;
  startsWith(column: string, value: string): string;
  endsWith(column: string, value: string): string;
  contains(column: string, value: string): string;
  regex(column: string, pattern: string): string;
  inList(column: string, values: string[]): string;
}

/** Column SQL per field of one table; a field without a column has no value on that resource (a constant). */
export interface SqlTarget {
  text: Partial<Record<TextField, string>>;
  dates?: Partial<Record<DateField, string>>;
  /** SQL true when a label `{key, value}` matches; `mode` contains: value (and key when `key` is '') contain the text. */
  label?: (l: Label, mode: 'equals' | 'contains', d: SqlDialect) => string;
  /** SQL true when the row matches `q`. */
  q?: (value: string, d: SqlDialect) => string;
  /** SQL true when the row's level is at least `rank`. */
  level?: (rank: number, d: SqlDialect) => string;
  /** Constant values of text fields this table does not store (an execution's `kind` is NORMAL). */
  constants?: Partial<Record<TextField, string>>;
}

function textSql(d: SqlDialect, col: string, op: TextOp, values: string[]): string {
  const first = values[0] ?? '';
  switch (op) {
    case 'EQUALS': return `${col} = ${d.param(first)}`;
    case 'NOT_EQUALS': return `(${col} IS NULL OR ${col} <> ${d.param(first)})`;
    case 'IN': return d.inList(col, values);
    case 'NOT_IN': return `(${col} IS NULL OR NOT ${d.inList(col, values)})`;
    case 'STARTS_WITH': return d.startsWith(col, first);
    case 'ENDS_WITH': return d.endsWith(col, first);
    case 'CONTAINS': return d.contains(col, first);
    case 'REGEX': return d.regex(col, first);
    case 'PREFIX': return `(${col} = ${d.param(first)} OR ${d.startsWith(col, `${first}.`)})`;
  }
}

const DATE_SQL: Record<DateOp, string> = {
  EQUALS: '=', NOT_EQUALS: '<>', GREATER_THAN: '>', GREATER_THAN_OR_EQUAL_TO: '>=', LESS_THAN: '<', LESS_THAN_OR_EQUAL_TO: '<=',
};

function labelsSql(t: SqlTarget, d: SqlDialect, op: LabelOp, labels: Label[]): string {
  if (!t.label) return op === 'NOT_EQUALS' || op === 'NOT_IN' ? '1 = 1' : '1 = 0';
  const each = labels.map((l) => t.label!(l, op === 'CONTAINS' ? 'contains' : 'equals', d));
  if (each.length === 0) return '1 = 1';
  switch (op) {
    case 'EQUALS':
    case 'CONTAINS': return `(${each.join(' AND ')})`;
    case 'IN': return `(${each.join(' OR ')})`;
    case 'NOT_EQUALS':
    case 'NOT_IN': return `NOT (${each.join(' OR ')})`;
  }
}

/**
 * SQL conditions (to AND together) for the filters on `target`. Parameters are registered through `dialect.param` in
 * the order their placeholders appear in the returned texts, so positional (`?`) dialects work when the conditions
 * are appended in order.
 */
export function filtersSql(filters: readonly SearchFilter[], target: SqlTarget, d: SqlDialect): string[] {
  const constant = (ok: boolean): string => (ok ? '1 = 1' : '1 = 0');
  return filters.map((f) => {
    switch (f.kind) {
      case 'text': {
        const col = target.text[f.field];
        if (col === undefined) return constant(textMatches(f.op, f.values, target.constants?.[f.field]));
        return textSql(d, col, f.op, f.values);
      }
      case 'present': {
        const col = target.text[f.field];
        if (col === undefined) return constant((target.constants?.[f.field] !== undefined) === f.present);
        return `${col} IS ${f.present ? 'NOT ' : ''}NULL`;
      }
      case 'date': {
        const col = target.dates?.[f.field];
        if (col === undefined) return constant(f.op === 'NOT_EQUALS');
        return `${col} ${DATE_SQL[f.op]} ${d.param(f.value)}`;
      }
      case 'labels': return labelsSql(target, d, f.op, f.labels);
      case 'q': {
        if (!target.q) return constant(f.op === 'NOT_EQUALS');
        const sql = target.q(f.value, d);
        return f.op === 'EQUALS' ? sql : `NOT (${sql})`;
      }
      case 'level': {
        if (!target.level) return constant(f.op === 'NOT_EQUALS');
        const sql = target.level(f.value, d);
        return f.op === 'EQUALS' ? sql : `NOT (${sql})`;
      }
    }
  });
}

/** SQLite spelling (positional `?` parameters pushed onto `params`); REGEX calls the `re2_find` function db.ts registers. */
export function sqliteDialect(params: unknown[]): SqlDialect {
  const param = (v: unknown): string => { params.push(v); return '?'; };
  return {
    param,
    startsWith: (c, v) => `substr(${c}, 1, ${param(v.length)}) = ${param(v)}`,
    endsWith: (c, v) => (v === '' ? `${c} IS NOT NULL` : `substr(${c}, ${param(-v.length)}) = ${param(v)}`),
    contains: (c, v) => `instr(${c}, ${param(v)}) > 0`,
    regex: (c, p) => `re2_find(${param(p)}, ${c})`,
    inList: (c, vs) => `${c} IN (SELECT value FROM json_each(${param(JSON.stringify(vs))}))`,
  };
}

/** PostgreSQL spelling (`$n` parameters pushed onto `params`). Patterns reach `~` only after RE2 accepted them. */
export function postgresDialect(params: unknown[]): SqlDialect {
  const param = (v: unknown): string => { params.push(v); return `$${params.length}`; };
  return {
    param,
    startsWith: (c, v) => `starts_with(${c}, ${param(v)})`,
    endsWith: (c, v) => `right(${c}, ${param(v.length)}) = ${param(v)}`,
    contains: (c, v) => `strpos(${c}, ${param(v)}) > 0`,
    regex: (c, p) => `${c} ~ ${param(p)}`,
    inList: (c, vs) => `${c} = ANY(${param(vs)}::text[])`,
  };
}
