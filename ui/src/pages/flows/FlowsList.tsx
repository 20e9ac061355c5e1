// /ui/flows: the flows, searched and filtered by namespace on the server, one page at a time, with each flow's last
// execution state (one POST /executions/latest for the page's flows). Filters live in the URL.
import { useEffect, useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { api, type Flow, type LastExecution } from '../../api';
import { DateTime } from '../../components/DateTime';
import { EmptyState } from '../../components/EmptyState';
import { ErrorBanner } from '../../components/ErrorBanner';
import { NamespaceSelect } from '../../components/NamespaceSelect';
import { StateBadge } from '../../components/StateBadge';
import { Table, usePaging, type Column } from '../../components/Table';
import { useApi } from '../../hooks';
import { flowPath } from './tabs';

export function FlowsList() {
  const [params, setParams] = useSearchParams();
  const q = params.get('q') ?? '';
  const namespace = params.get('namespace') ?? '';
  const { page, size, setPaging } = usePaging();
  const [text, setText] = useState(q);
  useEffect(() => setText(q), [q]);

  const setFilter = (key: string, value: string) => {
    const next = new URLSearchParams(params);
    if (value) next.set(key, value); else next.delete(key);
    next.delete('page');
    setParams(next);
  };
  // Search as the user types, once they pause.
  useEffect(() => {
    if (text === q) return undefined;
    const t = setTimeout(() => setFilter('q', text.trim()), 300);
    return () => clearTimeout(t);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [text]);

  const namespaces = useApi((signal) => api.flowNamespaces(signal), []);
  const flows = useApi(async (signal) => {
    const found = await api.searchFlows({ q: q || undefined, namespace: namespace || undefined, page, size }, signal);
    const latest = await api.latestExecutions(found.results.map((f) => ({ namespace: f.namespace, id: f.id })), signal);
    return { ...found, latest: new Map(latest.map((l) => [`${l.namespace}\u0000${l.flowId}`, l])) };
  }, [q, namespace, page, size]);

  const lastOf = (f: Flow): LastExecution | undefined => flows.data?.latest.get(`${f.namespace}\u0000${f.id}`);
  const columns: Column<Flow>[] = [
    { key: 'id', header: 'Id', render: (f) => <Link to={flowPath(f.namespace, f.id, 'overview')}>{f.id}</Link> },
    { key: 'namespace', header: 'Namespace', render: (f) => f.namespace },
    { key: 'labels', header: 'Labels', render: (f) => (f.labels ?? []).map((l) => <span key={l.key} className="chip">{l.key}:{l.value}</span>) },
    {
      key: 'last', header: 'Last execution', render: (f) => {
        const last = lastOf(f);
        return last ? <span className="row-gap"><StateBadge state={last.status} /> <DateTime value={last.startDate} /></span> : <span className="muted">none</span>;
      },
    },
    { key: 'triggers', header: 'Triggers', render: (f) => (f.triggers ?? []).map((t) => t.id).join(', ') || <span className="muted">–</span> },
    { key: 'revision', header: 'Revision', className: 'num', render: (f) => f.revision },
  ];

  return (
    <section>
      <div className="page-head">
        <h1>Flows</h1>
        <Link className="button primary" to={namespace ? `/flows/new?namespace=${encodeURIComponent(namespace)}` : '/flows/new'}>Create flow</Link>
      </div>
      <div className="filters" role="search">
        <label className="field-inline">Search
          <input type="search" aria-label="Search flows" placeholder="Search flows" value={text} onChange={(e) => setText(e.target.value)}
            onKeyDown={(e) => { if (e.key === 'Enter') setFilter('q', text.trim()); }} />
        </label>
        <NamespaceSelect value={namespace} namespaces={namespaces.data} onChange={(ns) => setFilter('namespace', ns)} />
      </div>
      <ErrorBanner error={flows.error ?? namespaces.error} onRetry={flows.reload} />
      {flows.data && (
        <Table label="Flows" columns={columns} rows={flows.data.results} rowKey={(f) => `${f.namespace}.${f.id}`}
          paging={{ page, size, total: flows.data.total, onChange: setPaging }}
          empty={<EmptyState title={q || namespace ? 'No flow matches these filters' : 'No flows yet'} />} />
      )}
      {flows.loading && !flows.data && <p className="muted" role="status">Loading…</p>}
    </section>
  );
}
