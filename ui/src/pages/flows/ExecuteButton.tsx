// The flow page's Execute button and its dialog: a form generated from the flow's inputs (InputsForm), checked for
// required values, sent as multipart form data (files as file parts) to POST /executions/{namespace}/{id}; the
// server's errors are shown at their fields, and a started execution opens its page.
import { useState, type FormEvent } from 'react';
import { useNavigate } from 'react-router';
import { api, ApiError, type Flow } from '../../api';
import { Dialog } from '../../components/Dialog';
import { ErrorBanner } from '../../components/ErrorBanner';
import { InputsForm } from '../../components/InputsForm';
import { checkValues, initialValues, toFormData, type InputValues } from '../../components/input-values';

/** The UI path of an execution's page. */
export const executionPath = (namespace: string, flowId: string, id: string): string =>
  `/executions/${encodeURIComponent(namespace)}/${encodeURIComponent(flowId)}/${encodeURIComponent(id)}`;

export function ExecuteButton({ flow }: { flow: Flow }) {
  const [open, setOpen] = useState(false);
  return (
    <>
      <button type="button" className="primary" onClick={() => setOpen(true)} disabled={flow.disabled}
        title={flow.disabled ? 'This flow is disabled' : undefined}>Execute</button>
      <Dialog open={open} title={`Execute ${flow.id}`} onClose={() => setOpen(false)} className="execute-dialog">
        <ExecuteForm flow={flow} onCancel={() => setOpen(false)} />
      </Dialog>
    </>
  );
}

function ExecuteForm({ flow, onCancel }: { flow: Flow; onCancel(): void }) {
  const inputs = flow.inputs ?? [];
  const navigate = useNavigate();
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
      const execution = await api.createExecution(flow.namespace, flow.id, toFormData(inputs, values));
      navigate(executionPath(execution.namespace, execution.flowId, execution.id));
    } catch (err) {
      if (err instanceof ApiError) {
        const atFields: Record<string, string> = {};
        for (const fe of err.errors) {
          const m = /^inputs\.(.+)$/.exec(fe.path);
          if (m && inputs.some((i) => i.id === m[1])) atFields[m[1]!] = fe.message;
        }
        setErrors(atFields);
        // The banner keeps what no field shows.
        const rest = err.errors.filter((fe) => !/^inputs\./.test(fe.path) || !atFields[fe.path.slice(7)]);
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
    <form onSubmit={(e) => void submit(e)} noValidate aria-label={`Inputs of ${flow.id}`}>
      <div className="dialog-body">
        <ErrorBanner error={error} />
        {inputs.length === 0 ? <p className="muted">This flow has no inputs.</p>
          : <InputsForm inputs={inputs} values={values} onChange={setValues} errors={errors} />}
      </div>
      <footer className="dialog-foot">
        <button type="button" onClick={onCancel} disabled={busy}>Cancel</button>
        <button type="submit" className="primary" disabled={busy}>Execute</button>
      </footer>
    </form>
  );
}
