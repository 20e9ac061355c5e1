// The flow page's Execute button and its dialog: the form of the flow's inputs (InputsForm), sent as multipart form
// data (files as file parts) to POST /executions/{namespace}/{id}; the server's errors are shown at their fields, and a
// started execution opens its page.
import { useState } from 'react';
import { useNavigate } from 'react-router';
import { api, type Flow } from '../../api';
import { Dialog } from '../../components/Dialog';
import { InputsForm } from '../../components/InputsForm';
import { executionPath } from '../../paths';


export function ExecuteButton({ flow }: { flow: Flow }) {
  const [open, setOpen] = useState(false);
  const navigate = useNavigate();
  return (
    <>
      <button type="button" className="primary" onClick={() => setOpen(true)} disabled={flow.disabled}
        title={flow.disabled ? 'This flow is disabled' : undefined}>Execute</button>
      <Dialog open={open} title={`Execute ${flow.id}`} onClose={() => setOpen(false)}>
        <InputsForm inputs={flow.inputs ?? []} label={`Inputs of ${flow.id}`} submitLabel="Execute" emptyText="This flow has no inputs."
          onCancel={() => setOpen(false)}
          onSubmit={async (body) => {
            const execution = await api.createExecution(flow.namespace, flow.id, body);
            navigate(executionPath(execution.namespace, execution.flowId, execution.id));
          }} />
      </Dialog>
    </>
  );
}
