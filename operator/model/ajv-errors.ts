// Turns ajv errors into readable issues: JSON pointers become paths like "tasks[2].timeout", and each
// keyword gets a human reason (unknown property named, unknown task type, ISO 8601 duration expected...).
import type { ErrorObject } from 'ajv';
import type { ValidationIssue } from './errors.js';
import { keySegment } from './traverse.js';
import { roleOf } from './schema-roles.js';
import { isInternalType, shortType } from './task-types.js';

/** An issue with the raw location kept, for filtering by the caller. */
export interface LocatedIssue extends ValidationIssue { pointer: string; keyword: string }

export function pointerSegments(pointer: string): string[] {
  if (!pointer) return [];
  return pointer.split('/').slice(1).map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
}

/** Readable path of a JSON pointer, using the document to tell list indexes from numeric map keys. */
export function readablePath(segments: string[], doc: unknown): string {
  let path = '';
  let node: unknown = doc;
  for (const seg of segments) {
    if (Array.isArray(node)) path += `[${seg}]`;
    else path += path === '' && /^[A-Za-z_$][\w$-]*$/.test(seg) ? seg : keySegment(seg);
    node = node && typeof node === 'object' && Object.hasOwn(node, seg) ? (node as Record<string, unknown>)[seg] : undefined;
  }
  return path;
}

const TYPE_NAMES: Record<string, string> = {
  string: 'a string', number: 'a number', integer: 'an integer', boolean: 'a boolean', object: 'a map', array: 'a list',
  null: 'null',
};

const show = (v: unknown): string => {
  const s = typeof v === 'string' ? v : JSON.stringify(v);
  return `\`${s !== undefined && s.length > 80 ? `${s.slice(0, 77)}...` : s}\``;
};

function typeNames(types: unknown): string[] {
  return (Array.isArray(types) ? types : [types]).map((t) => TYPE_NAMES[String(t)] ?? String(t));
}

/** "a, b or c" */
const orList = (items: string[]): string =>
  items.length <= 1 ? items.join('') : `${items.slice(0, -1).join(', ')} or ${items[items.length - 1]}`;

function typeMessage(e: ErrorObject): string {
  const parent = (e.parentSchema ?? {}) as Record<string, unknown>;
  const names = typeNames(e.params.type === undefined ? parent.type : String(e.params.type).split(','));
  if (parent.format === 'template') {
    const native = typeNames(parent.type).filter((n) => n !== 'a string');
    return `must be ${orList([...native, 'a template expression ({{ ... }})'])}, got ${show(e.data)}`;
  }
  if (parent.format === 'iso-duration') return `must be an ISO 8601 duration (e.g. PT5S), got ${show(e.data)}`;
  return `must be ${orList(names)}, got ${show(e.data)}`;
}

function enumMessage(e: ErrorObject, written: unknown): string {
  const value = written ?? e.data;
  switch (roleOf(e.parentSchema)?.kind) {
    case 'task-type':
      return typeof value === 'string' && isInternalType(value)
        ? `${show(value)} is an internal task type and cannot be used in a flow`
        : `Unknown task type ${show(value)}`;
    case 'condition-type': return `Unknown condition type ${show(value)}`;
    case 'runner-type': return `Unknown task runner type ${show(value)}`;
    default: {
      const allowed = (e.params.allowedValues as unknown[]).map((v) => shortType(String(v)));
      return `${show(value)} is not one of ${allowed.join(', ')}`;
    }
  }
}

function patternMessage(e: ErrorObject, written: unknown): string {
  const role = roleOf(e.parentSchema);
  if (role?.kind === 'trigger-type') return `Unknown trigger type ${show(written ?? e.data)}`;
  if (role?.kind === 'templated-enum') return `${show(e.data)} is not one of ${role.values.join(', ')} (or a template expression)`;
  if (role?.kind === 'namespace') {
    return `${show(e.data)} is not a valid namespace (lowercase letters, digits, \`_\`, \`-\`, segments separated by dots)`;
  }
  if (role?.kind === 'id') {
    const allowed = role.dots ? 'letters, digits, `.`, `_`, `-`' : 'letters, digits, `_`, `-`';
    return `${show(e.data)} is not a valid id (${allowed}; must start with a letter or digit)`;
  }
  return `${show(e.data)} does not match the pattern ${String(e.params.pattern)}`;
}

function formatMessage(e: ErrorObject): string {
  if (e.params.format === 'iso-duration') return `${show(e.data)} is not an ISO 8601 duration (e.g. PT5S)`;
  return typeMessage(e);
}

/** Task type whose own schema rejected a property. */
function ownerType(parentSchema: unknown): string | undefined {
  const role = roleOf(parentSchema);
  return role?.kind === 'task-schema' ? role.type : undefined;
}

const MESSAGES: Record<string, (e: ErrorObject, written: unknown) => string> = {
  type: typeMessage,
  enum: enumMessage,
  pattern: patternMessage,
  format: formatMessage,
  minimum: (e) => `must be >= ${String(e.params.limit)}, got ${show(e.data)}`,
  maximum: (e) => `must be <= ${String(e.params.limit)}, got ${show(e.data)}`,
  minItems: (e) => (e.params.limit === 1 ? 'must not be empty' : `must have at least ${String(e.params.limit)} items`),
  minLength: (e) => (e.params.limit === 1 ? 'must not be empty' : `must be at least ${String(e.params.limit)} characters`),
  maxLength: (e) => `must be at most ${String(e.params.limit)} characters long`,
};

/** Keywords whose error only repeats the errors of a sub-schema. */
const NOISE = new Set(['if', 'then', 'allOf', '$ref']);

/**
 * Issues of ajv errors on `doc`; `original` (the document as written, before type names were normalized)
 * is used to quote unknown type names the way the user wrote them.
 */
export function convertAjvErrors(errors: ErrorObject[] | null | undefined, doc: unknown, original?: unknown): LocatedIssue[] {
  const out: LocatedIssue[] = [];
  const seen = new Set<string>();
  for (const e of errors ?? []) {
    if (NOISE.has(e.keyword)) continue;
    const issue = convertOne(e, doc, original);
    const key = `${issue.path}\u0000${issue.message}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push(issue);
  }
  return out;
}

function valueAt(doc: unknown, segments: string[]): unknown {
  let node: unknown = doc;
  for (const seg of segments) {
    node = node && typeof node === 'object' && Object.hasOwn(node, seg) ? (node as Record<string, unknown>)[seg] : undefined;
  }
  return node;
}

function convertOne(e: ErrorObject, doc: unknown, original: unknown): LocatedIssue {
  const segments = pointerSegments(e.instancePath);
  const base = { keyword: e.keyword };
  if (e.keyword === 'required') {
    const prop = String(e.params.missingProperty);
    const pointer = `${e.instancePath}/${prop}`;
    return { ...base, pointer, path: readablePath([...segments, prop], doc), message: `required property \`${prop}\` is missing` };
  }
  if (e.keyword === 'additionalProperties') {
    const prop = String(e.params.additionalProperty);
    const owner = ownerType(e.parentSchema);
    const pointer = `${e.instancePath}/${prop}`;
    const message = `unknown property \`${prop}\`${owner ? ` for task type ${owner}` : ''}`;
    return { ...base, pointer, path: readablePath([...segments, prop], doc), message };
  }
  const written = (e.keyword === 'enum' || e.keyword === 'pattern') && original !== undefined ? valueAt(original, segments) : undefined;
  const message = (MESSAGES[e.keyword] ?? ((x: ErrorObject) => x.message ?? 'is invalid'))(e, written);
  return { ...base, pointer: e.instancePath, path: readablePath(segments, doc), message };
}
