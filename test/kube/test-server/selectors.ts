// Label selectors (=, ==, !=, in, notin, exists, !key) and field selectors (=, ==, !=) as the kube-apiserver parses them.
import { badRequest } from './errors.js';

type LabelReq =
  | { op: 'eq' | 'neq'; key: string; value: string }
  | { op: 'in' | 'notin'; key: string; values: string[] }
  | { op: 'exists' | 'notexists'; key: string };

export type LabelSelector = (labels: Record<string, string> | undefined) => boolean;

/** Split on commas that are not inside parentheses. */
function splitTop(s: string): string[] {
  const out: string[] = [];
  let depth = 0;
  let cur = '';
  for (const ch of s) {
    if (ch === '(') depth++;
    if (ch === ')') depth--;
    if (ch === ',' && depth === 0) { out.push(cur); cur = ''; continue; }
    cur += ch;
  }
  out.push(cur);
  return out.map((p) => p.trim()).filter((p) => p !== '');
}

const KEY = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

function checkKey(key: string, sel: string): string {
  if (!KEY.test(key)) throw badRequest(`unable to parse requirement: invalid label key "${key}" in selector "${sel}"`);
  return key;
}
function checkValue(v: string, sel: string): string {
  if (v.length > 63 || !VALUE.test(v)) throw badRequest(`unable to parse requirement: invalid label value "${v}" in selector "${sel}"`);
  return v;
}

export function parseLabelSelector(sel: string | null | undefined): LabelSelector {
  if (!sel || !sel.trim()) return () => true;
  const reqs: LabelReq[] = splitTop(sel).map((part) => {
    let m = /^(\S+)\s+(in|notin)\s*\(([^)]*)\)$/.exec(part);
    if (m) {
      const values = m[3].split(',').map((v) => checkValue(v.trim(), sel));
      return { op: m[2] as 'in' | 'notin', key: checkKey(m[1], sel), values };
    }
    m = /^([^=!\s]+)\s*(==|=|!=)\s*(\S*)$/.exec(part);
    if (m) return { op: m[2] === '!=' ? 'neq' : 'eq', key: checkKey(m[1], sel), value: checkValue(m[3], sel) };
    m = /^!\s*(\S+)$/.exec(part);
    if (m) return { op: 'notexists', key: checkKey(m[1], sel) };
    if (/^\S+$/.test(part)) return { op: 'exists', key: checkKey(part, sel) };
    throw badRequest(`unable to parse requirement: invalid selector "${sel}"`);
  });
  return (labels) => reqs.every((r) => {
    const has = labels !== undefined && Object.prototype.hasOwnProperty.call(labels, r.key);
    const v = has ? labels![r.key] : undefined;
    switch (r.op) {
      case 'eq': return has && v === r.value;
      case 'neq': return !has || v !== r.value;
      case 'in': return has && r.values.includes(v!);
      case 'notin': return !has || !r.values.includes(v!);
      case 'exists': return has;
      case 'notexists': return !has;
    }
  });
}

/** A label selector object (matchLabels / matchExpressions) as used in Job specs, rendered to the string syntax. */
export function labelSelectorString(sel: { matchLabels?: Record<string, string>; matchExpressions?: { key: string; operator: string; values?: string[] }[] }): string {
  const parts = Object.entries(sel.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`);
  for (const e of sel.matchExpressions ?? []) {
    if (e.operator === 'In') parts.push(`${e.key} in (${(e.values ?? []).join(',')})`);
    else if (e.operator === 'NotIn') parts.push(`${e.key} notin (${(e.values ?? []).join(',')})`);
    else if (e.operator === 'Exists') parts.push(e.key);
    else if (e.operator === 'DoesNotExist') parts.push(`!${e.key}`);
  }
  return parts.join(',');
}

export type FieldSelector = (obj: Record<string, unknown>) => boolean;

/** Read a dotted field path (e.g. `status.phase`) from an object; missing gives ''. */
export function fieldValue(obj: Record<string, unknown>, path: string): string {
  let cur: unknown = obj;
  for (const p of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return '';
    cur = (cur as Record<string, unknown>)[p];
  }
  return cur === undefined || cur === null ? '' : String(cur);
}

/** `supported` lists the field paths this resource allows (metadata.name and metadata.namespace always). */
export function parseFieldSelector(sel: string | null | undefined, supported: readonly string[]): FieldSelector {
  if (!sel || !sel.trim()) return () => true;
  const reqs = splitTop(sel).map((part) => {
    const m = /^([^=!\s]+)\s*(==|=|!=)\s*(.*)$/.exec(part);
    if (!m) throw badRequest(`invalid selector: '${sel}'; can't understand '${part}'`);
    const field = m[1];
    if (field !== 'metadata.name' && field !== 'metadata.namespace' && !supported.includes(field)) {
      throw badRequest(`field label not supported: ${field}`);
    }
    return { field, neq: m[2] === '!=', value: m[3].trim() };
  });
  return (obj) => reqs.every((r) => (fieldValue(obj, r.field) === r.value) !== r.neq);
}
