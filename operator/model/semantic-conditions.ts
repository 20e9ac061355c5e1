// Trigger condition checks beyond JSON Schema, run when a flow is saved: PublicHolidayCondition countries and
// subdivisions must be known to the holiday calendars, and DateTimeBetween/TimeBetween need a bound. Pure (the
// `date-holidays` calendars are data, no I/O); the trigger service uses the same region check at evaluation time.
import Holidays from 'date-holidays';
import type { ValidationIssue } from './errors.js';
import { LISTENER_CONDITIONS, PREFIX } from './task-types.js';
import { keySegment } from './traverse.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const C = `${PREFIX}core.condition.`;

let countries: Set<string> | undefined;
const states = new Map<string, Set<string>>();

export function knownCountries(): Set<string> {
  countries ??= new Set(Object.keys(new Holidays().getCountries()));
  return countries;
}

/** Subdivision code without its country prefix (`DE-BY` → `BY`), upper-cased. */
export function subdivisionCode(country: string, sub: string): string {
  const s = sub.trim().toUpperCase();
  const prefix = `${country.trim().toUpperCase()}-`;
  return s.startsWith(prefix) ? s.slice(prefix.length) : s;
}

/** Why the country (ISO 3166-1 alpha-2) or subdivision (ISO 3166-2) is unknown, or undefined when both are known. */
export function holidayRegionProblem(country: string, sub?: string): string | undefined {
  const c = country.trim().toUpperCase();
  if (!knownCountries().has(c)) return `\`${country}\` is not a known country code (ISO 3166-1 alpha-2, e.g. FR, US)`;
  if (sub === undefined || sub === '') return undefined;
  let known = states.get(c);
  if (!known) {
    known = new Set(Object.keys(new Holidays().getStates(c) ?? {}));
    states.set(c, known);
  }
  return known.has(subdivisionCode(c, sub)) ? undefined : `\`${sub}\` is not a known subdivision of ${c}`;
}

const literal = (v: unknown): v is string => typeof v === 'string' && !v.includes('{{') && !v.includes('{%');

function checkOne(c: Obj, path: string, out: ValidationIssue[]): void {
  if (c.type === `${C}PublicHolidayCondition` && literal(c.country)) {
    const sub = literal(c.subDivision) ? c.subDivision : undefined;
    const problem = holidayRegionProblem(c.country, sub);
    if (problem) out.push({ path: `${path}.${problem.includes('subdivision') ? 'subDivision' : 'country'}`, message: problem });
  }
  if ((c.type === `${C}DateTimeBetweenCondition` || c.type === `${C}TimeBetweenCondition`) && c.after === undefined && c.before === undefined) {
    out.push({ path, message: `${String(c.type).slice(C.length)} needs \`after\` or \`before\`` });
  }
}

/** Conditions of a list, or of a MultipleCondition map, recursively. */
function walk(conditions: unknown, path: string, out: ValidationIssue[]): void {
  const entries: [string, unknown][] = Array.isArray(conditions)
    ? conditions.map((c, i) => [`${path}[${i}]`, c])
    : isObj(conditions) ? Object.entries(conditions).map(([k, c]) => [path + keySegment(k), c]) : [];
  for (const [p, c] of entries) {
    if (!isObj(c)) continue;
    checkOne(c, p, out);
    walk(c.conditions, `${p}.conditions`, out);
  }
}

/** Condition issues of every trigger (`conditions` and the Schedule's `scheduleConditions`). */
export function conditionIssues(triggers: unknown): ValidationIssue[] {
  const out: ValidationIssue[] = [];
  if (!Array.isArray(triggers)) return out;
  triggers.forEach((t, i) => {
    if (!isObj(t)) return;
    walk(t.conditions, `triggers[${i}].conditions`, out);
    walk(t.scheduleConditions, `triggers[${i}].scheduleConditions`, out);
  });
  return out;
}

const LISTENER_TYPES: ReadonlySet<string> = new Set(LISTENER_CONDITIONS.map((n) => `${C}${n}`));

/** A flow's (deprecated) `listeners` may hold only conditions about the ended execution (Not/Or of them included). */
export function listenerConditionIssues(listeners: unknown): ValidationIssue[] {
  const out: ValidationIssue[] = [];
  const check = (conditions: unknown, path: string): void => {
    if (!Array.isArray(conditions)) return;
    conditions.forEach((c, i) => {
      if (!isObj(c) || typeof c.type !== 'string') return;
      const p = `${path}[${i}]`;
      if (!LISTENER_TYPES.has(c.type)) {
        out.push({ path: `${p}.type`, message: `\`${c.type.slice(c.type.startsWith(C) ? C.length : 0)}\` cannot be checked by a listener: a listener's conditions are ${LISTENER_CONDITIONS.join(', ')}` });
        return;
      }
      check(c.conditions, `${p}.conditions`);
    });
  };
  if (Array.isArray(listeners)) listeners.forEach((l, i) => { if (isObj(l)) check(l.conditions, `listeners[${i}].conditions`); });
  return out;
}
