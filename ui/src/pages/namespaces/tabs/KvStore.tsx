// The namespace's KV Store tab: its keys with type and expiration, a form to add a pair or edit one (a widget per
// type: STRING, NUMBER, BOOLEAN, DATETIME, DATE, DURATION, JSON; an optional ttl), and delete. The value is sent as
// JSON and the server infers its type from it (as Kestra's): a value the server would store under another type than
// the one chosen is refused here, at the field, before it is sent.
import { useState, type FormEvent } from 'react';
import { ApiError, KV_TYPES, api, type KvItem, type KvType } from '../../../api';
import { DateTime } from '../../../components/DateTime';
import { EmptyState } from '../../../components/EmptyState';
import { ErrorBanner } from '../../../components/ErrorBanner';
import { Table, type Column } from '../../../components/Table';
import { useApi } from '../../../hooks';
import type { NamespaceTabProps } from '../tabs';

const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;
const ISO_DURATION = /^P(?!$)(\d+(\.\d+)?Y)?(\d+(\.\d+)?M)?(\d+(\.\d+)?W)?(\d+(\.\d+)?D)?(T(?=\d)(\d+(\.\d+)?H)?(\d+(\.\d+)?M)?(\d+(\.\d+)?S)?)?$/;
const looksTyped = (s: string): boolean => ISO_DATE.test(s) || ISO_DURATION.test(s) || /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}/.test(s);

/** The JSON value for `text` typed as `type`, or an error message for the value field. */
export function kvValue(type: KvType, text: string): { value: unknown } | { error: string } {
  switch (type) {
    case 'STRING':
      return looksTyped(text) ? { error: 'This text reads as a date or a duration: choose that type' } : { value: text };
    case 'NUMBER': {
      const n = Number(text);
      return text.trim() !== '' && Number.isFinite(n) ? { value: n } : { error: 'Enter a number' };
    }
    case 'BOOLEAN':
      return text === 'true' || text === 'false' ? { value: text === 'true' } : { error: 'Choose true or false' };
    case 'DATETIME': {
      const ms = Date.parse(text);
      return Number.isNaN(ms) ? { error: 'Enter a date and time' } : { value: new Date(ms).toISOString() };
    }
    case 'DATE':
      return ISO_DATE.test(text) ? { value: text } : { error: 'Enter a date (YYYY-MM-DD)' };
    case 'DURATION':
      return ISO_DURATION.test(text) ? { value: text } : { error: 'Enter an ISO 8601 duration such as PT1H30M' };
    case 'JSON':
      try {
        const v: unknown = JSON.parse(text);
        return typeof v === 'object' && v !== null ? { value: v } : { error: 'Enter a JSON object or array' };
      } catch (err) {
        return { error: `Invalid JSON: ${(err as Error).message}` };
      }
  }
}

/** The stored value as the form's text for its type. */
function valueText(type: KvType, value: unknown): string {
  if (type === 'JSON') return JSON.stringify(value, null, 2);
  if (type === 'DATETIME' && typeof value === 'string') {
    const d = new Date(value);
    if (!Number.isNaN(d.getTime())) return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 19);
  }
  return String(value);
}

interface Draft { key: string; type: KvType; text: string; ttl: string; editing: boolean }
const EMPTY: Draft = { key: '', type: 'STRING', text: '', ttl: '', editing: false };

function ValueField({ draft, set, error }: { draft: Draft; set(d: Partial<Draft>): void; error?: string }) {
  const common = { id: 'kv-value', 'aria-invalid': error ? true : undefined, 'aria-describedby': error ? 'kv-value-error' : undefined };
  switch (draft.type) {
    case 'BOOLEAN':
      return (
        <select {...common} value={draft.text} onChange={(e) => set({ text: e.target.value })}>
          <option value="">Choose…</option><option value="true">true</option><option value="false">false</option>
        </select>
      );
    case 'NUMBER': return <input {...common} type="number" step="any" value={draft.text} onChange={(e) => set({ text: e.target.value })} />;
    case 'DATETIME': return <input {...common} type="datetime-local" step="1" value={draft.text} onChange={(e) => set({ text: e.target.value })} />;
    case 'DATE': return <input {...common} type="date" value={draft.text} onChange={(e) => set({ text: e.target.value })} />;
    case 'JSON': return <textarea {...common} className="code" rows={6} value={draft.text} onChange={(e) => set({ text: e.target.value })} />;
    default: return <input {...common} type="text" value={draft.text} placeholder={draft.type === 'DURATION' ? 'PT1H' : ''} onChange={(e) => set({ text: e.target.value })} />;
  }
}

export function NamespaceKv({ namespace }: NamespaceTabProps) {
  const list = useApi((signal) => api.kvList(namespace, signal), [namespace]);
  const [draft, setDraft] = useState<Draft | undefined>();
  const [fieldErrors, setFieldErrors] = useState<Record<string, string>>({});
  const [error, setError] = useState<unknown>();
  const [busy, setBusy] = useState(false);
  const set = (d: Partial<Draft>) => setDraft((cur) => ({ ...(cur ?? EMPTY), ...d }));

  const edit = async (item: KvItem) => {
    setError(undefined); setFieldErrors({});
    try {
      const { type, value } = await api.kvGet(namespace, item.key);
      setDraft({ key: item.key, type, text: valueText(type, value), ttl: '', editing: true });
    } catch (err) { setError(err); }
  };
  const remove = async (item: KvItem) => {
    setError(undefined);
    try { await api.kvDelete(namespace, item.key); list.reload(); } catch (err) { setError(err); }
  };
  const save = async (e: FormEvent) => {
    e.preventDefault();
    if (!draft) return;
    const errs: Record<string, string> = {};
    if (!draft.key.trim()) errs.key = 'Enter a key';
    const v = kvValue(draft.type, draft.text);
    if ('error' in v) errs.value = v.error;
    if (draft.ttl.trim() && !ISO_DURATION.test(draft.ttl.trim())) errs.ttl = 'Enter an ISO 8601 duration such as PT1H';
    setFieldErrors(errs);
    if (Object.keys(errs).length > 0 || 'error' in v) return;
    setBusy(true); setError(undefined);
    try {
      await api.kvPut(namespace, draft.key.trim(), v.value, draft.ttl.trim() || undefined);
      setDraft(undefined);
      list.reload();
    } catch (err) {
      if (err instanceof ApiError && err.errors.length) setFieldErrors(Object.fromEntries(err.errors.map((f) => [f.path === 'ttl' ? 'ttl' : f.path === 'key' ? 'key' : 'value', f.message])));
      setError(err);
    } finally { setBusy(false); }
  };

  const columns: Column<KvItem>[] = [
    { key: 'key', header: 'Key', render: (k) => <code>{k.key}</code> },
    { key: 'type', header: 'Type', render: (k) => k.type },
    { key: 'updated', header: 'Updated', render: (k) => <DateTime value={k.updateDate} /> },
    { key: 'expires', header: 'Expires', render: (k) => (k.expirationDate ? <DateTime value={k.expirationDate} /> : <span className="muted">never</span>) },
    {
      key: 'actions', header: 'Actions', render: (k) => (
        <span className="row-gap">
          <button type="button" aria-label={`Edit ${k.key}`} onClick={() => void edit(k)}>Edit</button>
          <button type="button" aria-label={`Delete ${k.key}`} onClick={() => void remove(k)}>Delete</button>
        </span>
      ),
    },
  ];

  return (
    <div className="stack">
      <div className="toolbar">
        <button type="button" className="primary" onClick={() => { setDraft({ ...EMPTY }); setFieldErrors({}); setError(undefined); }}>Add a key</button>
      </div>
      <ErrorBanner error={error ?? list.error} />
      {draft && (
        <form className="panel form-grid" aria-label={draft.editing ? `Edit ${draft.key}` : 'New KV pair'} onSubmit={(e) => void save(e)}>
          <label htmlFor="kv-key">Key</label>
          <div>
            <input id="kv-key" value={draft.key} readOnly={draft.editing} onChange={(e) => set({ key: e.target.value })}
              aria-invalid={fieldErrors.key ? true : undefined} />
            {fieldErrors.key && <div className="field-error" role="alert">{fieldErrors.key}</div>}
          </div>
          <label htmlFor="kv-type">Type</label>
          <select id="kv-type" value={draft.type} onChange={(e) => set({ type: e.target.value as KvType, text: '' })}>
            {KV_TYPES.map((t) => <option key={t} value={t}>{t}</option>)}
          </select>
          <label htmlFor="kv-value">Value</label>
          <div>
            <ValueField draft={draft} set={set} error={fieldErrors.value} />
            {fieldErrors.value && <div id="kv-value-error" className="field-error" role="alert">{fieldErrors.value}</div>}
          </div>
          <label htmlFor="kv-ttl">TTL</label>
          <div>
            <input id="kv-ttl" value={draft.ttl} placeholder="PT1H (optional)" onChange={(e) => set({ ttl: e.target.value })}
              aria-invalid={fieldErrors.ttl ? true : undefined} />
            {fieldErrors.ttl && <div className="field-error" role="alert">{fieldErrors.ttl}</div>}
          </div>
          <span />
          <div className="row-gap">
            <button type="submit" className="primary" disabled={busy}>Save</button>
            <button type="button" onClick={() => setDraft(undefined)}>Cancel</button>
          </div>
        </form>
      )}
      {list.data && (
        <Table label="KV pairs" columns={columns} rows={list.data} rowKey={(k) => k.key} empty={<EmptyState title="No KV pair in this namespace" />} />
      )}
      {list.loading && !list.data && <p className="muted" role="status">Loading…</p>}
    </div>
  );
}
