// The flow editor with its toolbar (problem count, Save) and the panels registered beside it (editor-panels.ts), for
// the Edit tab and /ui/flows/new: `onSave` sends the source; a refused save's errors are shown in a banner and at
// their lines in the editor.
import { useState, type ReactNode } from 'react';
import { ApiError } from '../../api';
import { ErrorBanner } from '../../components/ErrorBanner';
import { FlowEditor, type EditorProblems } from '../../components/flow-editor/FlowEditor';
import { placeProblems, type FlowProblem } from '../../components/flow-editor/flow-errors';
import { EDITOR_PANELS } from './editor-panels';

/** The problems a refused save names, placed in the source that was sent. */
export function saveProblems(source: string, err: unknown): FlowProblem[] {
  if (!(err instanceof ApiError)) return [];
  const named = err.errors.filter((e) => e.path);
  return placeProblems(source, named.length ? named : [{ path: '', message: err.message }]);
}

export function FlowSourceEditor({ source, onChange, onSave, status, actions, namespace, flowId }: {
  source: string;
  onChange(text: string): void;
  /** Saves `source`; resolves to what to tell the user (or nothing when the page moves on). */
  onSave(source: string): Promise<string | undefined>;
  /** Shown at the left of the toolbar. */
  status: ReactNode;
  /** More toolbar buttons, before Save. */
  actions?: ReactNode;
  namespace?: string;
  flowId?: string;
}) {
  const [problems, setProblems] = useState<EditorProblems>({ problems: [], validating: false });
  const [saving, setSaving] = useState(false);
  const [saveError, setSaveError] = useState<{ source: string; error: unknown }>();
  const [saved, setSaved] = useState<string>();

  const save = async () => {
    setSaving(true);
    setSaved(undefined);
    setSaveError(undefined);
    try {
      setSaved(await onSave(source));
    } catch (error) {
      setSaveError({ source, error });
    } finally {
      setSaving(false);
    }
  };
  const extra = saveError && saveError.source === source ? saveProblems(source, saveError.error) : [];
  const count = problems.problems.length;
  return (
    <div className="editor-layout">
      <div className="editor-main stack">
        <div className="toolbar">
          <span className="muted">{status}</span>
          <span className="spacer" />
          {count > 0 && <span className="badge badge-bad">{count} problem{count > 1 ? 's' : ''}</span>}
          {actions}
          <button type="button" className="primary" onClick={() => void save()} disabled={saving}>Save</button>
        </div>
        {saveError && <ErrorBanner error={saveError.error} />}
        {saved && <p role="status" className="saved">{saved}</p>}
        <FlowEditor value={source} onChange={(t) => { onChange(t); setSaved(undefined); }} extra={extra} onProblems={setProblems} />
      </div>
      {EDITOR_PANELS.map((P) => (
        <aside key={P.id} className="editor-panel panel" aria-label={P.label}>
          <P.component source={source} namespace={namespace} flowId={flowId} />
        </aside>
      ))}
    </div>
  );
}
