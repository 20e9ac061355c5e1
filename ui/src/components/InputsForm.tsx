// The form of declared inputs: a flow's `inputs` (the Execute dialog, pages/flows/ExecuteButton.tsx) and a Pause's
// `onResume` (the Resume dialog, pages/executions/ExecutionPage.tsx). One field labelled by the input id per input, a
// widget per type (text, number, select, multi-select, switch, date/time pickers, JSON/YAML text, masked secret, file
// upload, list of items), descriptions shown, the client's required check, then the multipart body (input-values.ts)
// handed to `onSubmit`; the server's `inputs.<id>` messages are shown under their fields, its other errors above.
import { useState, type FormEvent } from 'react';
import { ApiError, type FlowInput } from '../api';
import { ErrorBanner } from './ErrorBanner';
import { checkValues, initialValues, isRequired, placeServerErrors, toFormData, type InputValue, type InputValues } from './input-values';

const fieldId = (id: string) => `input-${id}`;

function Widget({ input, value, onChange, describedBy, invalid }: {
  input: FlowInput; value: InputValue; onChange(v: InputValue): void; describedBy?: string; invalid: boolean;
}) {
  const common = { id: fieldId(input.id), 'aria-describedby': describedBy, 'aria-invalid': invalid || undefined };
  const text = typeof value === 'string' ? value : '';
  const list = Array.isArray(value) ? value : [];
  const options = (input.values ?? []).map(String);
  switch (input.type) {
    case 'INT':
    case 'FLOAT':
      return <input {...common} type="number" step={input.type === 'INT' ? 1 : 'any'} value={text} onChange={(e) => onChange(e.target.value)} />;
    case 'BOOLEAN':
    case 'BOOL':
      return (
        <span className="switch">
          <input {...common} type="checkbox" role="switch" checked={value === true} onChange={(e) => onChange(e.target.checked)} />
          <span aria-hidden="true">{value === true ? 'true' : 'false'}</span>
        </span>
      );
    case 'ENUM':
    case 'SELECT':
      return (
        <select {...common} value={text} onChange={(e) => onChange(e.target.value)}>
          {(!isRequired(input) || input.defaults === undefined) && <option value="">(choose)</option>}
          {options.map((o) => <option key={o} value={o}>{o}</option>)}
        </select>
      );
    case 'MULTISELECT':
      return (
        <select {...common} multiple value={list} size={Math.min(6, Math.max(2, options.length))}
          onChange={(e) => onChange(Array.from(e.target.selectedOptions, (o) => o.value))}>
          {options.map((o) => <option key={o} value={o}>{o}</option>)}
        </select>
      );
    case 'DATETIME':
      return <input {...common} type="datetime-local" step={1} value={text} onChange={(e) => onChange(e.target.value)} />;
    case 'DATE':
      return <input {...common} type="date" value={text} onChange={(e) => onChange(e.target.value)} />;
    case 'TIME':
      return <input {...common} type="time" step={1} value={text} onChange={(e) => onChange(e.target.value)} />;
    case 'JSON':
    case 'YAML':
      return <textarea {...common} className="mono" rows={5} spellCheck={false} value={text} onChange={(e) => onChange(e.target.value)} />;
    case 'SECRET':
      return <input {...common} type="password" autoComplete="off" value={text} onChange={(e) => onChange(e.target.value)} />;
    case 'FILE':
      return <input {...common} type="file" onChange={(e) => onChange(e.target.files?.[0])} />;
    case 'ARRAY':
      return (
        <div className="array-field" role="group" aria-labelledby={`${fieldId(input.id)}-label`} aria-describedby={describedBy}>
          {list.map((item, k) => (
            <div key={k} className="row-gap">
              <input type="text" aria-label={`${input.id} item ${k + 1}`} value={item}
                onChange={(e) => onChange(list.map((x, j) => (j === k ? e.target.value : x)))} />
              <button type="button" aria-label={`Remove ${input.id} item ${k + 1}`} onClick={() => onChange(list.filter((_, j) => j !== k))}>Remove</button>
            </div>
          ))}
          <button type="button" aria-label={`Add ${input.id} item`} onClick={() => onChange([...list, ''])}>Add item</button>
          {input.itemType && <span className="muted"> items of type {input.itemType}</span>}
        </div>
      );
    default: // STRING, URI, DURATION and any other text
      return <input {...common} type="text" value={text} placeholder={input.type === 'DURATION' ? 'PT5M' : input.type === 'URI' ? 'https://' : undefined}
        onChange={(e) => onChange(e.target.value)} />;
  }
}

/** The fields alone (values held by the caller). */
function InputsFields({ inputs, values, onChange, errors }: {
  inputs: FlowInput[];
  values: InputValues;
  onChange(values: InputValues): void;
  /** A message per input id, shown under its field. */
  errors: Record<string, string | undefined>;
}) {
  return (
    <div className="inputs-form">
      {inputs.map((input) => {
        const error = errors[input.id];
        const descId = input.description ? `${fieldId(input.id)}-desc` : undefined;
        const errId = error ? `${fieldId(input.id)}-error` : undefined;
        const describedBy = [descId, errId].filter(Boolean).join(' ') || undefined;
        return (
          <div key={input.id} className={error ? 'input-field has-error' : 'input-field'}>
            <div className="input-head">
              <label id={`${fieldId(input.id)}-label`} htmlFor={input.type === 'ARRAY' ? undefined : fieldId(input.id)}>{input.id}</label>
              {isRequired(input) && input.defaults === undefined && <span className="required" title="required">*</span>}
              {input.displayName && <span className="muted">{input.displayName}</span>}
              <span className="input-type">{input.type}</span>
            </div>
            <Widget input={input} value={values[input.id]} onChange={(v) => onChange({ ...values, [input.id]: v })} describedBy={describedBy} invalid={!!error} />
            {input.description && <p id={descId} className="input-desc muted">{input.description}</p>}
            {error && <p id={errId} className="field-error" role="alert">{error}</p>}
          </div>
        );
      })}
    </div>
  );
}

/**
 * The whole form, to put in a Dialog: the fields in its body, Cancel and `submitLabel` in its footer. `onSubmit` sends
 * the body; what it throws is shown (an ApiError's `inputs.<id>` at the fields) and the form stays open.
 */
export function InputsForm({ inputs, label, submitLabel, emptyText, onSubmit, onCancel }: {
  inputs: FlowInput[]; label: string; submitLabel: string; emptyText: string;
  onSubmit(body: FormData): Promise<void>; onCancel(): void;
}) {
  const [values, setValues] = useState<InputValues>(() => initialValues(inputs));
  const [errors, setErrors] = useState<Record<string, string | undefined>>({});
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setError(undefined);
    const found = checkValues(inputs, values);
    setErrors(found);
    if (Object.keys(found).length > 0) return;
    setBusy(true);
    try {
      await onSubmit(toFormData(inputs, values));
    } catch (err) {
      if (err instanceof ApiError) {
        const { atFields, rest } = placeServerErrors(inputs, err.errors);
        setErrors(atFields);
        // The banner keeps what no field shows.
        if (Object.keys(atFields).length === 0 || rest.length > 0) setError(new ApiError(err.status, err.message, rest));
        else setError(new ApiError(err.status, 'Some inputs were refused: see the fields'));
      } else {
        setError(err);
      }
    } finally {
      setBusy(false);
    }
  };

  return (
    <form onSubmit={(e) => void submit(e)} noValidate aria-label={label}>
      <div className="dialog-body">
        <ErrorBanner error={error} />
        {inputs.length === 0 ? <p className="muted">{emptyText}</p>
          : <InputsFields inputs={inputs} values={values} onChange={setValues} errors={errors} />}
      </div>
      <footer className="dialog-foot">
        <button type="button" onClick={onCancel} disabled={busy}>Cancel</button>
        <button type="submit" className="primary" disabled={busy}>{submitLabel}</button>
      </footer>
    </form>
  );
}
