// /ui/flows: the flows, searched and filtered by namespace on the server, one page at a time, with each flow's last
// execution state (one POST /executions/latest for the page's flows; a credential that may read flows but not
// executions, as a cluster-home token can be, still gets the list, that column marked "not visible"). Filters live in the URL.
import { Link } from 'react-router';
import { ApiError, api, type Flow, type LastExecution } from '../../api';
import { DateTime } from '../../components/DateTime';
import { EmptyState } from '../../components/EmptyState';
import { ErrorBanner } from '../../components/ErrorBanner';
import { SearchFilter } from '../../components/Filters';
import { NamespaceSelect } from '../../components/NamespaceSelect';
import { StateBadge } from '../../components/StateBadge';
import { Table, usePaging, type Column } from '../../components/Table';
import { useApi, useUrlFilters } from '../../hooks';
import { flowPath } from '../../paths';


export function FlowsList() {
  const filters = useUrlFilters();
  const q = filters.value('q');
  const namespace = filters.value('namespace');
  const { page, size, setPaging } = usePaging();

  const flows = useApi(async (signal) => {
    const found = await api.searchFlows({ q: q || undefined, namespace: namespace || undefined, page, size }, signal);
    const latest = await api.latestExecutions(found.results.map((f) => ({ namespace: f.namespace, id: f.id })), signal)
      .catch((err: unknown) => { if (err instanceof ApiError && err.status === 403) return undefined; throw err; });
    return { ...found, latest: latest && new Map(latest.map((l) => [`${l.namespace}\u0000${l.flowId}`, l])) };
  }, [q, namespace, page, size]);

  const lastOf = (f: Flow): LastExecution | undefined => flows.data?.latest?.get(`${f.namespace}\u0000${f.id}`);
  const columns: Column<Flow>[] = [
    { key: 'id', header: 'Id', render: (f) => <Link to={flowPath(f.namespace, f.id, 'overview')}>{f.id}</Link> },
    { key: 'namespace', header: 'Namespace', render: (f) => f.namespace },
    { key: 'labels', header: 'Labels', render: (f) => (f.labels ?? []).map((l) => <span key={l.key} className="chip">{l.key}:{l.value}</span>) },
    {
      key: 'last', header: 'Last execution', render: (f) => {
        if (flows.data && !flows.data.latest) return <span className="muted" title="Your credential may not read executions">not visible</span>;
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
        <SearchFilter filters={filters} label="Search flows" />
        <NamespaceSelect value={namespace} onChange={(ns) => filters.set('namespace', ns)} />
      </div>
      <ErrorBanner error={flows.error} onRetry={flows.reload} />
      {flows.data && (
        <Table label="Flows" columns={columns} rows={flows.data.results} rowKey={(f) => `${f.namespace}.${f.id}`}
          paging={{ page, size, total: flows.data.total, onChange: setPaging }}
          empty={<EmptyState title={q || namespace ? 'No flow matches these filters' : 'No flows yet'} />} />
      )}
      {flows.loading && !flows.data && <p className="muted" role="status">Loading…</p>}
    </section>
  );
}
