// The flow's Edit tab: its YAML source in the flow editor (schema completions, problems at their lines as you type),
// and Save, which PUTs the source (a new revision when it changed); a refused save shows the server's errors at their
// lines too.
import { useEffect, useState } from 'react';
import { api } from '../../../api';
import { FlowSourceEditor } from '../FlowSourceEditor';
import type { FlowTabProps } from '../tabs';

export function FlowEdit({ flow, reload }: FlowTabProps) {
  const original = flow.source ?? '';
  const [source, setSource] = useState(original);
  // A reloaded flow (after a save) becomes the editor's text.
  useEffect(() => { setSource(original); }, [original]);
  const dirty = source !== original;

  const save = async (text: string) => {
    const next = await api.updateFlow(flow.namespace, flow.id, text);
    reload();
    return next.revision === flow.revision ? `No change: still revision ${next.revision}` : `Saved revision ${next.revision}`;
  };
  return (
    <FlowSourceEditor source={source} onChange={setSource} onSave={save} namespace={flow.namespace} flowId={flow.id}
      status={`Revision ${flow.revision}${dirty ? ' · unsaved changes' : ''}`}
      actions={<button type="button" onClick={() => setSource(original)} disabled={!dirty}>Discard changes</button>} />
  );
}
