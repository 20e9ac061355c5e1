// Save-time check of every templated string of a flow (task properties at any depth, outputs, variables, trigger
// inputs, labels, plugin defaults...; map keys too, since they are rendered): it must parse and name only known
// functions, filters and tests, and its literal regular expressions must compile on RE2. The expression engine
// decides (checkTemplate); this walk only finds the strings and names their paths.
import { checkTemplate, hasTemplate } from '../expr/index.js';
import type { ValidationIssue } from './errors.js';
import { keySegment } from './traverse.js';

/** Keys whose values are never rendered: identity, documentation, and regular expressions. */
const NOT_RENDERED: ReadonlySet<string> = new Set(['id', 'type', 'description', 'displayName', 'validator']);

function check(text: string, path: string, out: ValidationIssue[]): void {
  if (!hasTemplate(text)) return;
  for (const message of checkTemplate(text)) out.push({ path, message });
}

function walk(value: unknown, path: string, out: ValidationIssue[]): void {
  if (typeof value === 'string') return check(value, path, out);
  if (Array.isArray(value)) return value.forEach((item, i) => walk(item, `${path}[${i}]`, out));
  if (value === null || typeof value !== 'object') return;
  for (const [key, item] of Object.entries(value)) {
    if (NOT_RENDERED.has(key)) continue;
    const at = path + keySegment(key);
    check(key, at, out);
    walk(item, at, out);
  }
}

/** Issues of every template of a (normalized) flow document, at the field that holds it. */
export function templateIssues(flow: Record<string, unknown>): ValidationIssue[] {
  const out: ValidationIssue[] = [];
  for (const [key, value] of Object.entries(flow)) {
    if (!NOT_RENDERED.has(key)) walk(value, key, out);
  }
  return out;
}
