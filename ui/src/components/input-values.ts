// The values of declared inputs (a flow's `inputs`, a Pause's `onResume`) as InputsForm.tsx holds them: initial values
// from the declared defaults, the client's required check, the multipart body the execute and resume routes take
// (files as file parts, lists as JSON), as Kestra's UI sends them, and the server's `inputs.<id>` errors placed at their
// fields. Pure (no React), so a test can check it without a browser.
import type { FieldError, FlowInput } from '../api.js';

export type InputValue = string | boolean | string[] | File | undefined;
export type InputValues = Record<string, InputValue>;

const BOOLEAN_TYPES = ['BOOLEAN', 'BOOL'];
const LIST_TYPES = ['ARRAY', 'MULTISELECT'];

export const isRequired = (i: FlowInput): boolean => i.required !== false;

const pad = (n: number): string => String(n).padStart(2, '0');

/** An ISO date-time as the value of a `datetime-local` field (the browser's time zone, seconds kept). */
export function toLocalDateTime(iso: string): string | undefined {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return undefined;
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** The form's starting value of one input: its default when the widget can show it. */
export function initialValue(i: FlowInput): InputValue {
  const d = i.defaults;
  if (BOOLEAN_TYPES.includes(i.type)) return d === true || d === 'true';
  if (LIST_TYPES.includes(i.type)) {
    if (Array.isArray(d)) return d.map((x) => (typeof x === 'string' ? x : JSON.stringify(x)));
    if (typeof d === 'string' && d.trim().startsWith('[')) {
      try { const parsed: unknown = JSON.parse(d); if (Array.isArray(parsed)) return parsed.map(String); } catch { /* shown as empty */ }
    }
    return [];
  }
  if (d === undefined || d === null || i.type === 'FILE' || i.type === 'SECRET') return i.type === 'FILE' ? undefined : '';
  if (i.type === 'JSON' || i.type === 'YAML') return typeof d === 'string' ? d : JSON.stringify(d, null, 2);
  if (i.type === 'DATETIME') return typeof d === 'string' ? toLocalDateTime(d) ?? '' : '';
  return typeof d === 'string' ? d : String(d);
}

export function initialValues(inputs: FlowInput[]): InputValues {
  return Object.fromEntries(inputs.map((i) => [i.id, initialValue(i)]));
}

const isEmpty = (v: InputValue): boolean =>
  v === undefined || (typeof v === 'string' && v.trim() === '') || (Array.isArray(v) && v.filter((x) => x.trim() !== '').length === 0);

/**
 * The client's checks before sending: a required input without a default must be given, and JSON must parse. The
 * server checks the rest (types, ranges, validators) and its errors are shown at the field too.
 */
export function checkValues(inputs: FlowInput[], values: InputValues): Record<string, string> {
  const errors: Record<string, string> = {};
  for (const i of inputs) {
    const v = values[i.id];
    if (isEmpty(v)) {
      if (isRequired(i) && i.defaults === undefined && !BOOLEAN_TYPES.includes(i.type)) errors[i.id] = 'This input is required';
      continue;
    }
    if (i.type === 'JSON' && typeof v === 'string') {
      try { JSON.parse(v); } catch (err) { errors[i.id] = `Not valid JSON: ${(err as Error).message}`; }
    }
  }
  return errors;
}

/** The multipart body of an execution: one part per given input (empty optional ones are left to the server's defaults). */
export function toFormData(inputs: FlowInput[], values: InputValues): FormData {
  const fd = new FormData();
  for (const i of inputs) {
    const v = values[i.id];
    if (typeof v === 'boolean') { fd.append(i.id, String(v)); continue; }
    if (isEmpty(v)) continue;
    if (typeof File !== 'undefined' && v instanceof File) { fd.append(i.id, v, v.name); continue; }
    if (Array.isArray(v)) { fd.append(i.id, JSON.stringify(v.filter((x) => x.trim() !== ''))); continue; }
    const text = v as string;
    if (i.type === 'DATETIME') {
      const d = new Date(text);
      fd.append(i.id, Number.isNaN(d.getTime()) ? text : d.toISOString());
    } else {
      fd.append(i.id, text);
    }
  }
  return fd;
}

/**
 * The server's errors split by where the form shows them: `inputs.<id>` of a declared input at its field, the rest
 * (other paths, or an input the form does not show) above the form.
 */
export function placeServerErrors(inputs: FlowInput[], errors: FieldError[]): { atFields: Record<string, string>; rest: FieldError[] } {
  const atFields: Record<string, string> = {};
  const rest: FieldError[] = [];
  for (const fe of errors) {
    const m = /^inputs\.(.+)$/.exec(fe.path);
    if (m && inputs.some((i) => i.id === m[1]) && atFields[m[1]!] === undefined) atFields[m[1]!] = fe.message;
    else rest.push(fe);
  }
  return { atFields, rest };
}
