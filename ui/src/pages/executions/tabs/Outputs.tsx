// The execution's `outputs` tab: the flow's outputs and each task run's outputs as an expandable tree (task runs in
// the Gantt's order, filtered by task id, OUTPUT_PAGE at a time); an internal-storage file (a `kestra:///` value) can
// be previewed (its first PREVIEW_MAX_BYTES only: text, JSON pretty-printed, CSV as a table) or downloaded, both through
// GET /executions/{id}/file, which serves only the files of this execution.
import { useEffect, useMemo, useState } from 'react';
import { api, downloadFile, executionFilePath } from '../../../api';
import { EmptyState } from '../../../components/EmptyState';
import { ErrorBanner } from '../../../components/ErrorBanner';
import { StateBadge } from '../../../components/StateBadge';
import { ganttModel } from '../gantt-model';
import { runLabel } from '../states';
import type { ExecutionTabProps } from '../tabs';

const OUTPUT_PAGE = 100;
export const PREVIEW_MAX_BYTES = 256 * 1024;
const PREVIEW_MAX_ROWS = 200;
const STRING_MAX = 2000;

const isFile = (v: unknown): v is string => typeof v === 'string' && v.startsWith('kestra:///');
const fileName = (uri: string): string => { try { return decodeURIComponent(uri.split('/').pop() ?? uri); } catch { return uri; } };

export function ExecutionOutputs({ execution }: ExecutionTabProps) {
  const [filter, setFilter] = useState('');
  const [shown, setShown] = useState(OUTPUT_PAGE);
  const [preview, setPreview] = useState<string>();
  const [error, setError] = useState<unknown>();
  const withOutputs = useMemo(() => {
    const byId = new Map(execution.taskRunList.map((r) => [r.id, r]));
    return ganttModel(execution.taskRunList, Date.now())
      .rows.map((row) => byId.get(row.id)!)
      .filter((r) => r.outputs && Object.keys(r.outputs).length > 0);
  }, [execution.taskRunList]);
  const matching = filter ? withOutputs.filter((r) => r.taskId.toLowerCase().includes(filter.toLowerCase())) : withOutputs;
  const fileActions = {
    preview: (uri: string) => setPreview(uri),
    download: (uri: string) => { setError(undefined); downloadFile(executionFilePath(execution.id, uri), fileName(uri)).catch(setError); },
  };

  return (
    <div className={preview ? 'outputs has-preview' : 'outputs'}>
      <div className="stack outputs-tree">
        <label className="field-inline">Task
          <input type="search" aria-label="Filter outputs by task" placeholder="task id" value={filter} onChange={(e) => { setFilter(e.target.value); setShown(OUTPUT_PAGE); }} />
        </label>
        <ErrorBanner error={error} />
        {execution.outputs && Object.keys(execution.outputs).length > 0 && (
          <details className="panel" open>
            <summary>Flow outputs</summary>
            <Value value={execution.outputs} files={fileActions} />
          </details>
        )}
        {matching.slice(0, shown).map((r) => (
          <details key={r.id} className="panel" open={matching.length <= 10}>
            <summary>{runLabel(r)} <StateBadge state={r.state.current} /></summary>
            <Value value={r.outputs} files={fileActions} />
          </details>
        ))}
        {matching.length > shown && <button type="button" onClick={() => setShown((n) => n + OUTPUT_PAGE)}>Show {Math.min(OUTPUT_PAGE, matching.length - shown)} more</button>}
        {matching.length === 0 && !execution.outputs && <EmptyState title={filter ? 'No task matching this filter has outputs' : 'No outputs'} />}
      </div>
      {preview && <FilePreview executionId={execution.id} uri={preview} onClose={() => setPreview(undefined)} onDownload={() => fileActions.download(preview)} />}
    </div>
  );
}

type FileActions = { preview(uri: string): void; download(uri: string): void };

function Value({ value, files }: { value: unknown; files: FileActions }) {
  if (value === null || value === undefined) return <code className="muted">null</code>;
  if (Array.isArray(value) || typeof value === 'object') {
    const entries = Array.isArray(value) ? value.map((v, i) => [String(i), v] as const) : Object.entries(value as Record<string, unknown>);
    if (entries.length === 0) return <code className="muted">{Array.isArray(value) ? '[]' : '{}'}</code>;
    return (
      <ul className="tree">
        {entries.map(([k, v]) => (
          <li key={k}>
            {v !== null && typeof v === 'object'
              ? <details open={entries.length <= 20}><summary><code>{k}</code></summary><Value value={v} files={files} /></details>
              : <><code>{k}</code>: <Value value={v} files={files} /></>}
          </li>
        ))}
      </ul>
    );
  }
  if (isFile(value)) {
    return (
      <span className="row-gap">
        <code title={value}>{fileName(value)}</code>
        <button type="button" aria-label={`Preview ${fileName(value)}`} onClick={() => files.preview(value)}>Preview</button>
        <button type="button" aria-label={`Download ${fileName(value)}`} onClick={() => files.download(value)}>Download</button>
      </span>
    );
  }
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return <code className="value">{text.length > STRING_MAX ? `${text.slice(0, STRING_MAX)}… (${text.length} characters)` : text}</code>;
}

/** Splits CSV text into rows (quoted fields with "" escapes and line breaks), at most `max` rows. */
export function parseCsv(text: string, max: number): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length && rows.length < max; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { field += '"'; i++; } else if (c === '"') quoted = false; else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') { row.push(field); field = ''; }
    else if (c === '\n' || c === '\r') {
      if (c === '\r' && text[i + 1] === '\n') i++;
      row.push(field); rows.push(row); row = []; field = '';
    } else field += c;
  }
  if ((field !== '' || row.length > 0) && rows.length < max) { row.push(field); rows.push(row); }
  return rows;
}

type Preview = { size: number; truncated: boolean; kind: 'text' | 'json' | 'csv' | 'binary'; text: string };

function FilePreview({ executionId, uri, onClose, onDownload }: { executionId: string; uri: string; onClose(): void; onDownload(): void }) {
  const [state, setState] = useState<{ preview?: Preview; error?: unknown }>({});
  useEffect(() => {
    const ctrl = new AbortController();
    setState({});
    (async () => {
      const { size } = await api.fileSize(executionId, uri, ctrl.signal);
      const { bytes, truncated } = await api.fileHead(executionId, uri, PREVIEW_MAX_BYTES, ctrl.signal);
      const name = fileName(uri).toLowerCase();
      if (bytes.subarray(0, 8192).includes(0)) return { size, truncated, kind: 'binary', text: '' } as Preview;
      const text = new TextDecoder('utf-8', { fatal: false }).decode(bytes);
      if (name.endsWith('.json') && !truncated) {
        try { return { size, truncated, kind: 'json', text: JSON.stringify(JSON.parse(text), null, 2) } as Preview; } catch { /* shown as text */ }
      }
      if (name.endsWith('.csv')) return { size, truncated, kind: 'csv', text } as Preview;
      return { size, truncated, kind: 'text', text } as Preview;
    })().then((preview) => { if (!ctrl.signal.aborted) setState({ preview }); }, (error) => { if (!ctrl.signal.aborted) setState({ error }); });
    return () => ctrl.abort();
  }, [executionId, uri]);
  const p = state.preview;
  const rows = p?.kind === 'csv' ? parseCsv(p.text, PREVIEW_MAX_ROWS + 1) : [];
  return (
    <section className="panel file-preview" aria-label={`Preview of ${fileName(uri)}`}>
      <div className="page-head">
        <h2>{fileName(uri)} {p && <span className="muted">({p.size.toLocaleString()} bytes)</span>}</h2>
        <span className="row-gap">
          <button type="button" onClick={onDownload}>Download</button>
          <button type="button" onClick={onClose}>Close preview</button>
        </span>
      </div>
      <ErrorBanner error={state.error} />
      {!p && !state.error && <p className="muted" role="status">Loading…</p>}
      {p?.truncated && <p className="muted">Showing the first {PREVIEW_MAX_BYTES / 1024} KiB; download the file for all of it.</p>}
      {p?.kind === 'binary' && <p>A binary file: download it to open it.</p>}
      {(p?.kind === 'text' || p?.kind === 'json') && <pre className="preview-text">{p.text}</pre>}
      {p?.kind === 'csv' && (
        <div className="table-wrap">
          <table className="table" aria-label="File rows">
            <thead><tr>{(rows[0] ?? []).map((h, i) => <th key={i} scope="col">{h}</th>)}</tr></thead>
            <tbody>{rows.slice(1, PREVIEW_MAX_ROWS + 1).map((r, i) => <tr key={i}>{r.map((c, j) => <td key={j}>{c}</td>)}</tr>)}</tbody>
          </table>
          {rows.length > PREVIEW_MAX_ROWS && <p className="muted">The first {PREVIEW_MAX_ROWS} rows.</p>}
        </div>
      )}
    </section>
  );
}
