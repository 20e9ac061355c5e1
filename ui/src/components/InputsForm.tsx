// A form generated from declared inputs (a flow's `inputs`, a Pause task's `onResume`): one labelled field per input
// id with a widget per type, defaults filled, `required` enforced, the server's message shown at its field
// (`inputs.<id>`); it hands a multipart FormData (files included) to `onSubmit`.
import { useState, type FormEvent } from 'react';
import { ApiError, type FlowInput } from '../api';

const text = (v: unknown): string => (v === undefined || v === null ? '' : typeof v === 'string' ? v : JSON.stringify(v, null, 2));
const isRequired = (i: FlowInput): boolean => i.required !== false && i.defaults === undefined;

/** The initial text of each field: its default, for DATETIME in the picker's local format. */
function initial(i: FlowInput): string {
  if (i.defaults === undefined) return '';
  if (i.type === 'DATETIME' && typeof i.defaults === 'string') {
    const d = new Date(i.defaults);
    if (!Number.isNaN(d.getTime())) return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 19);
  }
  if (i.type === 'ARRAY' && Array.isArray(i.defaults)) return i.defaults.map(text).join('\n');
  if ((i.type === 'BOOLEAN' || i.type === 'BOOL')) return i.defaults === true || i.defaults === 'true' ? 'true' : 'false';
  return text(i.defaults);
}

/** The value sent for one field (undefined: not sent, the server applies the default). */
function encoded(i: FlowInput, v: string): string | undefined {
  if (v === '' && i.type !== 'BOOLEAN' && i.type !== 'BOOL') return undefined;
  if (i.type === 'DATETIME') return new Date(v).toISOString();
  if (i.type === 'ARRAY') return JSON.stringify(v.split('\n').map((x) => x.trim()).filter((x) => x !== ''));
  return v;
}

export function InputsForm({ inputs, error, busy, submitLabel, onSubmit, onCancel }: {
  inputs: FlowInput[]; error?: unknown; busy?: boolean; submitLabel: string; onSubmit(values: FormData): void; onCancel?(): void;
}) {
  const [values, setValues] = useState<Record<string, string>>(() => Object.fromEntries(inputs.map((i) => [i.id, initial(i)])));
  const [files, setFiles] = useState<Record<string, File | undefined>>({});
  const set = (id: string, v: string) => setValues((s) => ({ ...s, [id]: v }));
  const fieldError = (id: string): string | undefined => (error instanceof ApiError ? error.fieldMessage(`inputs.${id}`) : undefined);

  const submit = (e: FormEvent) => {
    e.preventDefault();
    const form = new FormData();
    for (const i of inputs) {
      if (i.type === 'FILE') {
        const f = files[i.id];
        if (f) form.append(i.id, f, f.name);
        continue;
      }
      if (i.type === 'MULTISELECT') {
        const list = values[i.id] ? (JSON.parse(values[i.id]!) as string[]) : [];
        if (list.length) form.append(i.id, JSON.stringify(list));
        continue;
      }
      const v = encoded(i, values[i.id] ?? '');
      if (v !== undefined) form.append(i.id, v);
    }
    onSubmit(form);
  };

  const widget = (i: FlowInput) => {
    const id = `input-${i.id}`;
    const common = { id, name: i.id, required: isRequired(i), 'aria-invalid': fieldError(i.id) ? true : undefined, 'aria-describedby': `${id}-help` };
    const v = values[i.id] ?? '';
    const options = (i.values ?? []).map(text);
    switch (i.type) {
      case 'BOOLEAN': case 'BOOL':
        return <input {...common} required={false} type="checkbox" role="switch" checked={v === 'true'} onChange={(e) => set(i.id, e.target.checked ? 'true' : 'false')} />;
      case 'INT': case 'FLOAT':
        return <input {...common} type="number" step={i.type === 'INT' ? 1 : 'any'} value={v} onChange={(e) => set(i.id, e.target.value)} />;
      case 'ENUM': case 'SELECT':
        return (
          <select {...common} value={v} onChange={(e) => set(i.id, e.target.value)}>
            {!isRequired(i) || v === '' ? <option value="">–</option> : null}
            {options.map((o) => <option key={o} value={o}>{o}</option>)}
          </select>
        );
      case 'MULTISELECT': {
        const chosen: string[] = v ? (JSON.parse(v) as string[]) : [];
        return (
          <select {...common} multiple value={chosen} onChange={(e) => set(i.id, JSON.stringify([...e.target.selectedOptions].map((o) => o.value)))}>
            {options.map((o) => <option key={o} value={o}>{o}</option>)}
          </select>
        );
      }
      case 'DATETIME': return <input {...common} type="datetime-local" step={1} value={v} onChange={(e) => set(i.id, e.target.value)} />;
      case 'DATE': return <input {...common} type="date" value={v} onChange={(e) => set(i.id, e.target.value)} />;
      case 'TIME': return <input {...common} type="time" step={1} value={v} onChange={(e) => set(i.id, e.target.value)} />;
      case 'SECRET': return <input {...common} type="password" autoComplete="off" value={v} onChange={(e) => set(i.id, e.target.value)} />;
      case 'FILE': return <input {...common} type="file" onChange={(e) => setFiles((s) => ({ ...s, [i.id]: e.target.files?.[0] }))} />;
      case 'JSON': case 'YAML': case 'ARRAY':
        return <textarea {...common} rows={4} className="code" value={v} onChange={(e) => set(i.id, e.target.value)} />;
      default:
        return <input {...common} type="text" value={v} onChange={(e) => set(i.id, e.target.value)} />;
    }
  };

  return (
    <form className="inputs-form" onSubmit={submit} noValidate={false}>
      {inputs.map((i) => (
        <div key={i.id} className="field">
          <label htmlFor={`input-${i.id}`}>{i.id}{isRequired(i) ? ' *' : ''} <span className="muted">{i.type}{i.type === 'ARRAY' ? ' (one item per line)' : ''}</span></label>
          {widget(i)}
          <small id={`input-${i.id}-help`} className={fieldError(i.id) ? 'field-error' : 'muted'}>{fieldError(i.id) ?? i.description ?? ''}</small>
        </div>
      ))}
      {inputs.length === 0 && <p className="muted">No inputs to fill.</p>}
      <div className="dialog-actions">
        {onCancel && <button type="button" onClick={onCancel}>Cancel</button>}
        <button type="submit" className="primary" disabled={busy}>{submitLabel}</button>
      </div>
    </form>
  );
}
