// A live graph of YAML being edited (the flow editor's preview panel): POST /flows/graph after the text has been
// still for a moment, the last valid graph kept on screen while the text is invalid, the server's message shown.
import { useEffect, useState } from 'react';
import { api, ApiError, type FlowGraph } from '../../api';
import { ErrorBanner } from '../ErrorBanner';
import { FlowGraphPanel } from './FlowGraphPanel';

/** How long the text must stay unchanged before the graph is asked for (one request per pause, not per key). */
export const PREVIEW_DEBOUNCE_MS = 500;

export function SourceGraphPreview({ source }: { source: string }) {
  const [graph, setGraph] = useState<FlowGraph>();
  const [error, setError] = useState<unknown>();
  useEffect(() => {
    if (!source.trim()) return undefined;
    const ctrl = new AbortController();
    const timer = setTimeout(() => {
      api.sourceGraph(source, ctrl.signal).then(
        (g) => { setGraph(g); setError(undefined); },
        (e) => { if (!ctrl.signal.aborted) setError(e); },
      );
    }, PREVIEW_DEBOUNCE_MS);
    return () => { clearTimeout(timer); ctrl.abort(); };
  }, [source]);
  const invalid = error instanceof ApiError && error.status === 422;
  return (
    <div className={invalid && graph ? 'graph-stale' : undefined}>
      {invalid
        ? <p className="muted" role="status">Not a valid flow yet ({error.message}){graph ? ': showing the last valid graph' : ''}.</p>
        : <ErrorBanner error={error} />}
      {graph && <FlowGraphPanel graph={graph} label="Graph preview" height={420} compact />}
      {!graph && !error && <p className="muted" role="status">Drawing the graph…</p>}
    </div>
  );
}
