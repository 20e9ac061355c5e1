// Reads Kestra's search filters from the query string (`filters[field][OPERATION]=value`, labels also as
// `filters[labels][OP][key]=value`, IN/NOT_IN lists comma-separated or repeated) into validated SearchFilters, and the
// legacy plain parameters Kestra still takes beside them. An unknown field, an operation the field does not take or a
// bad value is a 400 naming the parameter; nothing is ignored.
import type { Context } from 'koa';
import { reservedSegment } from '../operator/core/keyed.js';
import type { Limits } from '../operator/core/limits.js';
import { ExecutionStates, LogLevels } from '../operator/core/types.js';
import type { Label } from '../operator/core/types.js';
import { regexIssue } from '../operator/expr/regex.js';
import { parseDuration } from '../operator/model/duration.js';
import {
  FIELD_OPS, FilterOps, RESOURCE_FIELDS, type DateOp, type FilterField, type FilterOp, type LabelOp, type SearchFilter,
  type SearchResource, type TextField, type TextOp,
} from '../operator/store/filters.js';
import { badRequest } from './errors.js';
import { parseLabels } from './query.js';

/** Kestra's system flows namespace (kestra.system-flows.namespace default): `scope` SYSTEM is it, USER the rest. */
export const SYSTEM_NAMESPACE = 'system';
const SCOPES = ['USER', 'SYSTEM'] as const;
const KINDS = ['NORMAL', 'TEST', 'PLAYGROUND'] as const;
const FILTER_KEY = /^filters\[([^\]]*)\]\[([^\]]*)\](?:\[(.+)\])?$/;

interface RawFilter { param: string; field: FilterField; op: FilterOp; key?: string; values: string[] }

const isField = (f: string): f is FilterField => Object.hasOwn(FIELD_OPS, f);

function rawValues(ctx: Context, name: string): string[] {
  const raw = ctx.query[name];
  return raw === undefined ? [] : Array.isArray(raw) ? raw : [raw];
}

/** IN/NOT_IN lists: repeated parameters and comma-separated values, Kestra's `[a,b]` brackets dropped. */
const listOf = (values: string[]): string[] =>
  values.flatMap((v) => v.replace(/[[\]]/g, '').split(',')).map((v) => v.trim()).filter((v) => v !== '');

function readRaw(ctx: Context, resource: SearchResource): RawFilter[] {
  const out: RawFilter[] = [];
  for (const param of Object.keys(ctx.query)) {
    if (!param.startsWith('filters[')) continue;
    const m = FILTER_KEY.exec(param);
    if (!m) throw badRequest(`Invalid filter '${param}': expected filters[field][OPERATION]=value`, param);
    const [, field, opText, key] = m as unknown as [string, string, string, string | undefined];
    if (!isField(field)) {
      throw badRequest(`Unknown filter field '${field}' in '${param}'; the ${resource} search takes ${RESOURCE_FIELDS[resource].join(', ')}`, param);
    }
    if (!RESOURCE_FIELDS[resource].includes(field)) {
      throw badRequest(`Field '${field}' is not supported by the ${resource} search; supported fields are ${RESOURCE_FIELDS[resource].join(', ')}`, param);
    }
    const op = opText.toUpperCase() as FilterOp;
    if (!(FilterOps as readonly string[]).includes(op)) {
      throw badRequest(`Unknown filter operation '${opText}' in '${param}'; operations are ${FilterOps.join(', ')}`, param);
    }
    const ops = FIELD_OPS[field] as readonly FilterOp[];
    if (!ops.includes(op)) {
      throw badRequest(`Operation ${op} is not supported for field '${field}'; supported operations are ${ops.join(', ')}`, param);
    }
    if (key !== undefined && field !== 'labels') throw badRequest(`Filter '${param}': only labels take a key`, param);
    out.push({ param, field, op, ...(key !== undefined ? { key } : {}), values: rawValues(ctx, param) });
  }
  return out;
}

function one(f: RawFilter): string {
  const v = f.values[f.values.length - 1];
  if (v === undefined || v === '') throw badRequest(`Filter '${f.param}' needs a value`, f.param);
  return v;
}

function checkedList(f: RawFilter, limits: Limits, allowed?: readonly string[]): string[] {
  const list = listOf(f.values);
  if (list.length === 0) throw badRequest(`Filter '${f.param}' needs a value`, f.param);
  if (list.length > limits.searchFilterMaxValues) {
    throw badRequest(`Filter '${f.param}' lists ${list.length} values: over the limit of ${limits.searchFilterMaxValues} (setting SEARCH_FILTER_MAX_VALUES)`, f.param);
  }
  for (const v of allowed ? list : []) {
    if (!allowed!.includes(v)) throw badRequest(`Invalid value '${v}' of '${f.param}': expected one of ${allowed!.join(', ')}`, f.param);
  }
  return list;
}

function textFilter(f: RawFilter, field: TextField, limits: Limits): SearchFilter {
  const op = f.op as TextOp;
  const values = op === 'IN' || op === 'NOT_IN' ? checkedList(f, limits) : [one(f)];
  if (op === 'REGEX') {
    const pattern = values[0]!;
    if (pattern.length > limits.searchRegexMaxLength) {
      throw badRequest(`The pattern of '${f.param}' is ${pattern.length} characters: over the limit of ${limits.searchRegexMaxLength} (setting SEARCH_REGEX_MAX_LENGTH)`, f.param);
    }
    const issue = regexIssue(pattern);
    if (issue !== undefined) throw badRequest(`Invalid regular expression in '${f.param}': ${issue}`, f.param);
  }
  return { kind: 'text', field, op, values };
}

function dateValue(f: RawFilter): string {
  const v = one(f);
  const ms = /^\d{4}-\d{2}-\d{2}/.test(v) ? Date.parse(v) : NaN;
  if (Number.isNaN(ms)) throw badRequest(`Invalid '${f.param}': expected an ISO 8601 date-time, got '${v}'`, f.param);
  return new Date(ms).toISOString();
}

/** A label of `filters[labels][OP][key]=value`, or `key:value` (as the `labels` parameter); CONTAINS also takes a bare text. */
function label(text: string, f: RawFilter, key?: string): Label {
  if (key === undefined) {
    if (f.op === 'CONTAINS' && text.indexOf(':') <= 0) return { key: '', value: text };
    return parseLabels([text], f.param)[0]!;
  }
  const reserved = reservedSegment(key);
  if (reserved !== undefined) throw badRequest(`Invalid label key '${key}' in '${f.param}': '${reserved}' is reserved`, f.param);
  return { key, value: text };
}

/** scope as a namespace condition: USER is every namespace but the system one. */
function scopeFilter(f: RawFilter, limits: Limits): SearchFilter | undefined {
  const scopes = checkedList(f, limits, SCOPES);
  if ((f.op === 'EQUALS' || f.op === 'NOT_EQUALS') && scopes.length > 1) {
    throw badRequest(`Only one scope can be used with ${f.op} ('${f.param}')`, f.param);
  }
  const positive = f.op === 'EQUALS' || f.op === 'IN';
  const user = scopes.includes('USER');
  const system = scopes.includes('SYSTEM');
  if (user && system) return positive ? undefined : { kind: 'text', field: 'namespace', op: 'IN', values: [] };
  const onlySystem = positive ? system : user;
  return { kind: 'text', field: 'namespace', op: onlySystem ? 'EQUALS' : 'NOT_EQUALS', values: [SYSTEM_NAMESPACE] };
}

function toFilter(f: RawFilter, limits: Limits, now: Date): SearchFilter | undefined {
  switch (f.field) {
    case 'q': return { kind: 'q', op: f.op as 'EQUALS' | 'NOT_EQUALS', value: one(f) };
    case 'scope': return scopeFilter(f, limits);
    case 'namespace':
    case 'flowId':
    case 'triggerExecutionId':
    case 'triggerId':
    case 'executionId':
    case 'workerId': return textFilter(f, f.field, limits);
    case 'kind': {
      const values = checkedList(f, limits, KINDS);
      return { kind: 'text', field: 'kind', op: f.op === 'EQUALS' || f.op === 'IN' ? 'IN' : 'NOT_IN', values };
    }
    case 'state': {
      const values = checkedList(f, limits, ExecutionStates);
      return { kind: 'text', field: 'state', op: f.op === 'EQUALS' || f.op === 'IN' ? 'IN' : 'NOT_IN', values };
    }
    case 'startDate':
    case 'endDate': return { kind: 'date', field: f.field, op: f.op as DateOp, value: dateValue(f) };
    case 'timeRange': {
      const v = one(f);
      let ms: number;
      try {
        ms = parseDuration(v);
      } catch {
        throw badRequest(`Invalid '${f.param}': expected an ISO 8601 duration such as PT24H, got '${v}'`, f.param);
      }
      return { kind: 'date', field: 'startDate', op: 'GREATER_THAN_OR_EQUAL_TO', value: new Date(now.getTime() - ms).toISOString() };
    }
    case 'childFilter': {
      const v = one(f).toUpperCase();
      if (v !== 'CHILD' && v !== 'MAIN') throw badRequest(`Invalid value '${v}' of '${f.param}': expected CHILD or MAIN`, f.param);
      return { kind: 'present', field: 'triggerExecutionId', present: (v === 'CHILD') === (f.op === 'EQUALS') };
    }
    case 'triggerState': {
      const v = one(f).toLowerCase();
      if (v !== 'enabled' && v !== 'disabled') throw badRequest(`Invalid value '${v}' of '${f.param}': expected enabled or disabled`, f.param);
      return { kind: 'text', field: 'triggerState', op: f.op as TextOp, values: [v] };
    }
    case 'level': {
      const v = one(f).toUpperCase();
      const rank = (LogLevels as readonly string[]).indexOf(v);
      if (rank < 0) throw badRequest(`Invalid value '${v}' of '${f.param}': expected one of ${LogLevels.join(', ')}`, f.param);
      return { kind: 'level', op: f.op as 'EQUALS' | 'NOT_EQUALS', value: rank };
    }
    case 'labels': return undefined; // grouped by operation in searchFilters
  }
}

/**
 * Every `filters[...]` parameter of the request as validated filters for `resource` (labels grouped by operation as
 * Kestra does: `filters[labels][IN][a]=1&filters[labels][IN][b]=2` is one IN over both), plus `legacy` filters.
 */
export function searchFilters(ctx: Context, resource: SearchResource, limits: Limits, now = new Date()): SearchFilter[] {
  const raw = readRaw(ctx, resource);
  if (raw.length > limits.searchFilterMaxValues) {
    throw badRequest(`${raw.length} search filters: over the limit of ${limits.searchFilterMaxValues} (setting SEARCH_FILTER_MAX_VALUES)`, 'filters');
  }
  const out: SearchFilter[] = [];
  const labels = new Map<LabelOp, Label[]>();
  for (const f of raw) {
    if (f.field === 'labels') {
      const list = labels.get(f.op as LabelOp) ?? [];
      const texts = f.values.filter((v) => v !== '');
      if (texts.length === 0) throw badRequest(`Filter '${f.param}' needs a value`, f.param);
      list.push(...texts.map((t) => label(t, f, f.key)));
      labels.set(f.op as LabelOp, list);
      continue;
    }
    const filter = toFilter(f, limits, now);
    if (filter) out.push(filter);
  }
  for (const [op, list] of labels) out.push({ kind: 'labels', op, labels: list });
  return out;
}

/** Legacy parameters that are not an equality: a scope list, a date range. */
const LEGACY_OPS: Partial<Record<FilterField, FilterOp>> = {
  scope: 'IN', startDate: 'GREATER_THAN_OR_EQUAL_TO', endDate: 'LESS_THAN_OR_EQUAL_TO',
};

/** Kestra's legacy plain parameters a route does not read itself, as filters (`q=x` is `filters[q][EQUALS]=x`...). */
export function legacyFilters(ctx: Context, names: readonly FilterField[], limits: Limits, now = new Date()): SearchFilter[] {
  const out: SearchFilter[] = [];
  for (const field of names) {
    const values = rawValues(ctx, field).filter((v) => v !== '');
    if (values.length === 0) continue;
    const op: FilterOp = LEGACY_OPS[field] ?? 'EQUALS';
    const filter = toFilter({ param: field, field, op, values }, limits, now);
    if (filter) out.push(filter);
  }
  return out;
}
