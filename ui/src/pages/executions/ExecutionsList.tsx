// /ui/executions: executions searched on the server one page at a time, filtered by namespace, flow, state, labels
// and start-date range (all in the URL, so links carry them), with Kestra's columns; rows can be selected and killed,
// restarted or deleted together through the by-ids routes, after a confirmation. The page reads itself again every
// few seconds while one of its rows has not ended.
import { useEffect, useState } from 'react';
import { useSearchParams } from 'react-router';
import { api, type ExecutionSummary } from '../../api';
import { ConfirmDialog } from '../../components/Dialog';
import { EmptyState } from '../../components/EmptyState';
import { ErrorBanner } from '../../components/ErrorBanner';
import { StateSelect } from '../../components/Filters';
import { executionColumns } from '../../components/execution-columns';
import { NamespaceSelect } from '../../components/NamespaceSelect';
import { Table, usePaging, type Column } from '../../components/Table';
import { useApi, useUrlFilters } from '../../hooks';
import { isTerminalState } from './states';

const REFRESH_MS = 3000;

type Bulk = 'kill' | 'restart' | 'delete';
const BULK: Record<Bulk, { verb: string; done: string; call(ids: string[]): Promise<{ count: number }>; note: string }> = {
  kill: { verb: 'Kill', done: 'kill requested', call: api.bulkKill, note: 'Their running tasks are stopped; they end KILLED.' },
  restart: { verb: 'Restart', done: 'restarted', call: api.bulkRestart, note: 'Only FAILED, KILLED or CANCELLED executions can be restarted.' },
  delete: { verb: 'Delete', done: 'deleted', call: api.bulkDelete, note: 'Their logs and files are deleted too. This cannot be undone.' },
};

/** A `datetime-local` value as an ISO instant (the browser's time zone), or undefined. */
const isoOf = (local: string): string | undefined => {
  if (!local) return undefined;
  const d = new Date(local);
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString();
};

export function ExecutionsList() {
  const [params, setParams] = useSearchParams();
  const namespace = params.get('namespace') ?? '';
  const flowId = params.get('flowId') ?? '';
  const state = params.get('state') ?? '';
  const labels = params.getAll('labels');
  const from = params.get('from') ?? '';
  const to = params.get('to') ?? '';
  const { page, size, setPaging } = usePaging();
  const [flowText, setFlowText] = useState(flowId);
  const [labelText, setLabelText] = useState(labels.join(', '));
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [bulk, setBulk] = useState<Bulk>();
  const [busy, setBusy] = useState(false);
  const [bulkError, setBulkError] = useState<unknown>();
  const [done, setDone] = useState<string>();

  const filters = useUrlFilters();

  const executions = useApi((signal) => api.searchExecutions({
    namespace: namespace || undefined, flowId: flowId || undefined, state: state ? [state] : undefined,
    labels: labels.length ? labels : undefined, startDate: isoOf(from), endDate: isoOf(to), page, size,
  }, signal), [namespace, flowId, state, labels.join('\n'), from, to, page, size]);
  const rows = executions.data?.results ?? [];
  const keySet = rows.map((e) => e.id).join(',');
  // A new page or new filters: the selection is of rows no longer shown.
  useEffect(() => { setSelected((s) => new Set([...s].filter((id) => rows.some((e) => e.id === id)))); }, [keySet]); // eslint-disable-line react-hooks/exhaustive-deps

  const anyRunning = rows.some((e) => !isTerminalState(e.state.current));
  useEffect(() => {
    if (!anyRunning) return undefined;
    const t = setTimeout(executions.reload, REFRESH_MS);
    return () => clearTimeout(t);
  }, [anyRunning, executions.data, executions.reload]);

  const toggle = (id: string, on: boolean) => setSelected((s) => {
    const next = new Set(s);
    if (on) next.add(id); else next.delete(id);
    return next;
  });
  const allOnPage = rows.length > 0 && rows.every((e) => selected.has(e.id));

  const runBulk = async () => {
    if (!bulk) return;
    setBusy(true);
    setBulkError(undefined);
    try {
      const ids = [...selected];
      const { count } = await BULK[bulk].call(ids);
      setDone(`${count} execution${count === 1 ? '' : 's'} ${BULK[bulk].done}`);
      setBulk(undefined);
      setSelected(new Set());
      executions.reload();
    } catch (err) {
      setBulkError(err);
    } finally {
      setBusy(false);
    }
  };

  const columns: Column<ExecutionSummary>[] = [
    {
      key: 'select', header: 'Select', render: (e) => (
        <input type="checkbox" aria-label={`Select ${e.id}`} checked={selected.has(e.id)} onChange={(ev) => toggle(e.id, ev.target.checked)} />
      ),
    },
    ...executionColumns('id', 'flow', 'state', 'start', 'end', 'duration', 'labels'),
  ];

  const filtered = Boolean(namespace || flowId || state || labels.length || from || to);
  const count = selected.size;

  return (
    <section>
      <div className="page-head"><h1>Executions</h1></div>
      <form className="filters wrap" role="search" aria-label="Execution filters" onSubmit={(e) => {
        e.preventDefault();
        const next = new URLSearchParams(params);
        next.delete('flowId'); next.delete('labels'); next.delete('page');
        if (flowText.trim()) next.set('flowId', flowText.trim());
        for (const l of labelText.split(',').map((x) => x.trim()).filter(Boolean)) next.append('labels', l);
        setParams(next);
      }}>
        <NamespaceSelect value={namespace} onChange={(ns) => filters.set('namespace', ns)} />
        <label className="field-inline">Flow
          <input type="search" value={flowText} placeholder="flow id" onChange={(e) => setFlowText(e.target.value)} />
        </label>
        <StateSelect filters={filters} />
        <label className="field-inline">Labels
          <input type="search" value={labelText} placeholder="key:value, key:value" onChange={(e) => setLabelText(e.target.value)} />
        </label>
        <label className="field-inline">Started after
          <input type="datetime-local" step={1} value={from} onChange={(e) => filters.set('from', e.target.value)} />
        </label>
        <label className="field-inline">Started before
          <input type="datetime-local" step={1} value={to} onChange={(e) => filters.set('to', e.target.value)} />
        </label>
        <button type="submit">Apply filters</button>
        <button type="button" onClick={() => executions.reload()}>Refresh</button>
      </form>

      <div className="bulk-bar" role="toolbar" aria-label="Selected executions">
        <label className="field-inline">
          <input type="checkbox" checked={allOnPage} disabled={rows.length === 0}
            onChange={(e) => setSelected(e.target.checked ? new Set(rows.map((r) => r.id)) : new Set())} /> Select all on this page
        </label>
        <span className="muted">{count} selected</span>
        {(Object.keys(BULK) as Bulk[]).map((b) => (
          <button key={b} type="button" disabled={count === 0} onClick={() => { setBulkError(undefined); setDone(undefined); setBulk(b); }}>{BULK[b].verb} selected</button>
        ))}
        {done && <span role="status" className="ok-text">{done}</span>}
      </div>

      <ErrorBanner error={executions.error} onRetry={executions.reload} />
      {executions.data && (
        <Table label="Executions" columns={columns} rows={rows} rowKey={(e) => e.id}
          paging={{ page, size, total: executions.data.total, onChange: setPaging }}
          empty={<EmptyState title={filtered ? 'No execution matches these filters' : 'No executions yet'} />} />
      )}
      {executions.loading && !executions.data && <p className="muted" role="status">Loading…</p>}

      {bulk && (
        <ConfirmDialog open title={`${BULK[bulk].verb} ${count} execution${count === 1 ? '' : 's'}?`} confirmLabel={`${BULK[bulk].verb} executions`}
          busy={busy} onCancel={() => setBulk(undefined)} onConfirm={runBulk}>
          <p>{BULK[bulk].note}</p>
          <ul className="kv">{[...selected].slice(0, 10).map((id) => <li key={id}><code>{id}</code></li>)}</ul>
          {count > 10 && <p className="muted">and {count - 10} more</p>}
          <ErrorBanner error={bulkError} />
        </ConfirmDialog>
      )}
    </section>
  );
}
