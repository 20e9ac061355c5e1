// The namespace's Editor tab: its namespace files as a tree (folders opened on demand, one listing each) and the shared
// CodeEditor for the chosen file (highlighted by its extension: code-languages.ts), saved through the namespace-files
// routes (Save or Ctrl-S); create a file or a folder, delete a file.
import { useState } from 'react';
import { api, type FileAttributes } from '../../../api';
import { CodeEditor } from '../../../components/CodeEditor';
import { languageOfPath } from '../../../components/code-languages';
import { EmptyState } from '../../../components/EmptyState';
import { ErrorBanner } from '../../../components/ErrorBanner';
import { useApi } from '../../../hooks';
import type { NamespaceTabProps } from '../tabs';

const join = (dir: string, name: string): string => `${dir === '/' ? '' : dir}/${name}`;

function Folder({ namespace, path, depth, selected, onOpen, version }: {
  namespace: string; path: string; depth: number; selected?: string; onOpen(path: string): void; version: number;
}) {
  const listing = useApi((signal) => api.listFiles(namespace, path, signal), [namespace, path, version]);
  const [open, setOpen] = useState<Record<string, boolean>>({});
  if (listing.error) return <ErrorBanner error={listing.error} onRetry={listing.reload} />;
  if (!listing.data) return <li className="muted">Loading…</li>;
  const entries = [...listing.data].sort((a, b) => (a.type === b.type ? a.fileName.localeCompare(b.fileName) : a.type === 'Directory' ? -1 : 1));
  if (entries.length === 0 && depth === 0) return <li><EmptyState title="No namespace file yet" /></li>;
  return (
    <>
      {entries.map((f: FileAttributes) => {
        const p = join(path, f.fileName);
        if (f.type === 'Directory') {
          return (
            <li key={p}>
              <button type="button" className="tree-item" aria-expanded={!!open[p]} onClick={() => setOpen((o) => ({ ...o, [p]: !o[p] }))}>
                {open[p] ? '▾' : '▸'} {f.fileName}/
              </button>
              {open[p] && <ul className="file-list"><Folder namespace={namespace} path={p} depth={depth + 1} selected={selected} onOpen={onOpen} version={version} /></ul>}
            </li>
          );
        }
        return (
          <li key={p}>
            <button type="button" className={p === selected ? 'tree-item selected' : 'tree-item'} aria-current={p === selected ? 'true' : undefined}
              aria-label={`Open ${p}`} onClick={() => onOpen(p)}>{f.fileName}</button>
          </li>
        );
      })}
    </>
  );
}

export function NamespaceEditor({ namespace }: NamespaceTabProps) {
  const [path, setPath] = useState<string>();
  const [text, setText] = useState('');
  const [saved, setSaved] = useState('');
  const [error, setError] = useState<unknown>();
  const [status, setStatus] = useState('');
  const [version, setVersion] = useState(0);
  const [newPath, setNewPath] = useState('');

  const open = async (p: string) => {
    if (path && text !== saved && !window.confirm(`Discard the changes to ${path}?`)) return;
    setError(undefined); setStatus('');
    try {
      const content = await api.readFile(namespace, p);
      setPath(p); setText(content); setSaved(content);
    } catch (err) { setError(err); }
  };
  const save = async () => {
    if (!path) return;
    setError(undefined);
    try {
      await api.writeFile(namespace, path, text);
      setSaved(text); setStatus(`Saved ${path}`);
      setVersion((v) => v + 1);
    } catch (err) { setError(err); }
  };
  const create = async (e: { preventDefault(): void }, kind: 'file' | 'folder') => {
    e.preventDefault();
    const p = `/${newPath.trim().replace(/^\/+/, '')}`;
    if (p === '/') return;
    setError(undefined);
    try {
      if (kind === 'folder') await api.makeDirectory(namespace, p);
      else { await api.writeFile(namespace, p, ''); setPath(p); setText(''); setSaved(''); }
      setNewPath(''); setVersion((v) => v + 1); setStatus(`Created ${p}`);
    } catch (err) { setError(err); }
  };
  const remove = async () => {
    if (!path) return;
    setError(undefined);
    try {
      await api.deleteFile(namespace, path);
      setStatus(`Deleted ${path}`); setPath(undefined); setText(''); setSaved(''); setVersion((v) => v + 1);
    } catch (err) { setError(err); }
  };

  return (
    <div className="files-layout">
      <aside className="panel file-tree" aria-label="Namespace files">
        <form className="row-gap wrap" onSubmit={(e) => void create(e, 'file')}>
          <input aria-label="New file or folder path" placeholder="scripts/main.py" value={newPath} onChange={(e) => setNewPath(e.target.value)} />
          <button type="submit">New file</button>
          <button type="button" onClick={(e) => void create(e, 'folder')}>New folder</button>
        </form>
        <ul aria-label="Files" className="file-list">
          <Folder namespace={namespace} path="/" depth={0} selected={path} onOpen={(p) => void open(p)} version={version} />
        </ul>
      </aside>
      <section className="panel grow">
        <ErrorBanner error={error} />
        {status && <p className="muted" role="status">{status}</p>}
        {path ? (
          <>
            <div className="row-gap spread">
              <h2><code>{path}</code>{text !== saved && <span className="muted"> (modified)</span>}</h2>
              <span className="row-gap">
                <button type="button" className="primary" onClick={() => void save()} disabled={text === saved}>Save</button>
                <button type="button" onClick={() => void remove()} aria-label={`Delete ${path}`}>Delete</button>
              </span>
            </div>
            <div className="file-editor" onKeyDown={(e) => { if ((e.ctrlKey || e.metaKey) && e.key === 's') { e.preventDefault(); void save(); } }}>
              {/* One editor per file: its undo history is that file's. */}
              <CodeEditor key={path} label="File content" value={text} onChange={setText} language={languageOfPath(path)} height="420px" />
            </div>
          </>
        ) : <EmptyState title="Choose a file to edit" />}
      </section>
    </div>
  );
}
