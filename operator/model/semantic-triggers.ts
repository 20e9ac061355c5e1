// Trigger checks beyond JSON Schema: Schedule cron expressions (5 fields, 6 with withSeconds, or an @alias),
// time zone names and backfill dates, and Kestra plugin properties we refuse rather than ignore. Pure (cron-parser and
// luxon do no I/O).
import { CronExpressionParser } from 'cron-parser';
import { IANAZone } from 'luxon';
import { isDuration } from './duration.js';
import type { ValidationIssue } from './errors.js';
import { parseDateTime } from './input-coerce.js';
import { PLUGIN_TRIGGER_TYPES } from './schema-triggers.js';
import { PREFIX, TRIGGER_TYPES } from './task-types.js';
import { keySegment } from './traverse.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

const ALIASES = new Set(['@yearly', '@annually', '@monthly', '@weekly', '@daily', '@midnight', '@hourly']);

/** Why a cron expression is invalid, or undefined when it is fine. */
export function cronProblem(cron: string, withSeconds = false): string | undefined {
  const expr = cron.trim();
  if (ALIASES.has(expr.toLowerCase())) return undefined;
  const fields = expr.split(/\s+/).length;
  const expected = withSeconds ? 6 : 5;
  if (fields !== expected) return `\`${cron}\` is not a cron expression: expected ${expected} fields, got ${fields}`;
  try {
    CronExpressionParser.parse(expr);
    return undefined;
  } catch (err) {
    return `\`${cron}\` is not a valid cron expression: ${(err as Error).message}`;
  }
}

function checkSchedule(t: Obj, path: string, out: ValidationIssue[]): void {
  if (typeof t.cron === 'string' && !t.cron.includes('{{')) {
    const problem = cronProblem(t.cron, t.withSeconds === true);
    if (problem) out.push({ path: `${path}.cron`, message: problem });
  }
  if (typeof t.timezone === 'string' && !IANAZone.isValidZone(t.timezone)) {
    out.push({ path: `${path}.timezone`, message: `\`${t.timezone}\` is not a known time zone (e.g. Europe/Paris)` });
  }
  if (isObj(t.backfill)) {
    for (const field of ['start', 'end'] as const) {
      const v = t.backfill[field];
      if (typeof v === 'string' && !parseDateTime(v)) {
        out.push({ path: `${path}.backfill.${field}`, message: `\`${v}\` is not an ISO 8601 date-time` });
      }
    }
    const start = parseDateTime(t.backfill.start);
    const end = parseDateTime(t.backfill.end);
    if (start && end && end < start) {
      out.push({ path: `${path}.backfill.end`, message: `\`${String(t.backfill.end)}\` is before backfill.start` });
    }
  }
}

/** Kestra properties whose behaviour is not built: refused at save rather than silently ignored. */
function checkUnsupported(t: Obj, path: string, out: ValidationIssue[]): void {
  if (t.type === PLUGIN_TRIGGER_TYPES.http && (t.encryptBody === true || t.encryptBody === 'true')) {
    out.push({ path: `${path}.encryptBody`, message: 'encrypted trigger outputs are not supported (no encryption key is configured); remove encryptBody or set it to false' });
  }
  if (t.type === PLUGIN_TRIGGER_TYPES.mqtt && t.authMethod !== undefined && t.authMethod !== '') {
    out.push({ path: `${path}.authMethod`, message: 'MQTT 5 enhanced authentication is not supported; use username/password (or remove authMethod)' });
  }
}

function checkDurationField(o: Obj, field: string, path: string, out: ValidationIssue[]): void {
  const v = o[field];
  if (v === undefined || (typeof v === 'string' && (v.includes('{{') || isDuration(v)))) return;
  out.push({ path: `${path}.${field}`, message: `\`${String(v)}\` is not an ISO 8601 duration (e.g. PT5S)` });
}

/** MultipleCondition windows, recursively through nested conditions (lists or maps). */
function checkConditions(conditions: unknown, path: string, out: ValidationIssue[]): void {
  const entries: [string, unknown][] = Array.isArray(conditions)
    ? conditions.map((c, i) => [`${path}[${i}]`, c])
    : isObj(conditions) ? Object.entries(conditions).map(([k, c]) => [path + keySegment(k), c]) : [];
  for (const [p, c] of entries) {
    if (!isObj(c)) continue;
    if (c.type === `${PREFIX}core.condition.MultipleCondition`) {
      checkDurationField(c, 'window', p, out);
      checkDurationField(c, 'windowAdvance', p, out);
    }
    checkConditions(c.conditions, `${p}.conditions`, out);
  }
}

export function triggerIssues(triggers: unknown): ValidationIssue[] {
  const out: ValidationIssue[] = [];
  if (!Array.isArray(triggers)) return out;
  triggers.forEach((t, i) => {
    if (!isObj(t)) return;
    const path = `triggers[${i}]`;
    if (t.type === TRIGGER_TYPES.schedule) checkSchedule(t, path, out);
    else checkDurationField(t, 'interval', path, out); // polling triggers of plugins
    checkUnsupported(t, path, out);
    checkConditions(t.conditions, `${path}.conditions`, out);
  });
  return out;
}
