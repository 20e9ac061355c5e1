// resolveInputs: turns the values provided for an execution (form fields, JSON, rendered subflow/trigger
// inputs) into typed input values per the flow's input declarations, or throws InputValidationError listing every problem.
import { dict } from '../core/keyed.js';
import type { Input } from '../core/types.js';
import { InputValidationError, type ValidationIssue } from './errors.js';
import { coerceInputValue } from './input-coerce.js';

const isTemplate = (v: unknown): boolean => typeof v === 'string' && v.includes('{{');

/** A provided value counts as missing when absent, null, or an empty string for a non-text type. */
function isMissing(def: Input, value: unknown): boolean {
  if (value === undefined || value === null) return true;
  return value === '' && def.type !== 'STRING' && def.type !== 'SECRET';
}

/** Where the values come from, for the rules that depend on it. */
export interface ResolveOptions {
  /**
   * Decides whether an internal-storage URI given for a FILE input may be used (undefined: yes; else why not). The
   * caller knows who gives it: the API accepts its uploads and files of the flow's namespace, a Subflow what its parent
   * may read, a trigger what its source may read. Without it, a FILE input accepts no URI at all.
   */
  fileUri?(uri: string): string | undefined;
}

const NO_FILE_URIS = 'internal-storage URIs are not accepted here: upload the file as a multipart file part';

function resolveOne(def: Input, provided: Record<string, unknown>, opts: ResolveOptions): { value: unknown } | { error: string } {
  const value = Object.prototype.hasOwnProperty.call(provided, def.id) ? provided[def.id] : undefined;
  if (isMissing(def, value)) {
    if (def.defaults !== undefined && def.defaults !== null) {
      // Templated defaults are rendered by the caller; they are passed through untouched.
      if (isTemplate(def.defaults)) return { value: def.defaults };
      const r = coerceInputValue(def, def.defaults);
      return r.ok ? { value: r.value } : { error: `invalid default value: ${r.message}` };
    }
    if (def.required === false) return { value: null };
    return { error: 'Missing required input' };
  }
  const r = coerceInputValue(def, value);
  if (!r.ok) return { error: r.message };
  if (def.type === 'FILE' && typeof r.value === 'string') {
    const denied = opts.fileUri ? opts.fileUri(r.value) : NO_FILE_URIS;
    if (denied) return { error: denied };
  }
  return { value: r.value };
}

/**
 * Typed input values keyed by declared input id (dotted ids stay dotted keys; prototype-free). Undeclared keys are ignored.
 * Throws InputValidationError with one issue per bad input (path "inputs.<id>").
 */
export function resolveInputs(defs: Input[] | undefined, provided: Record<string, unknown>, opts: ResolveOptions = {}): Record<string, unknown> {
  const result = dict();
  const errors: ValidationIssue[] = [];
  for (const def of defs ?? []) {
    const r = resolveOne(def, provided ?? {}, opts);
    if ('error' in r) errors.push({ path: `inputs.${def.id}`, message: r.error });
    else result[def.id] = r.value;
  }
  if (errors.length > 0) throw new InputValidationError(errors);
  return result;
}
