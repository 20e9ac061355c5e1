// /ui/namespaces: the namespaces (stored ones and those of flows, with their parents), searched and paged on the
// server, each with the number of its flows (its child namespaces' included: one count per row of the page).
import { Link } from 'react-router';
import { api, type NamespaceItem } from '../../api';
import { EmptyState } from '../../components/EmptyState';
import { ErrorBanner } from '../../components/ErrorBanner';
import { SearchFilter } from '../../components/Filters';
import { Table, usePaging, type Column } from '../../components/Table';
import { useApi, useUrlFilters } from '../../hooks';
import { namespacePath } from '../../paths';


export function NamespacesList() {
  const filters = useUrlFilters();
  const q = filters.value('q');
  const { page, size, setPaging } = usePaging();

  const list = useApi(async (signal) => {
    const found = await api.searchNamespaces({ q: q || undefined, page, size }, signal);
    const counts = await Promise.all(found.results.map((n) => api.searchFlows({ namespace: n.id, page: 1, size: 1 }, signal).then((p) => p.total)));
    return { ...found, counts: new Map(found.results.map((n, i) => [n.id, counts[i]!])) };
  }, [q, page, size]);

  const columns: Column<NamespaceItem>[] = [
    { key: 'id', header: 'Namespace', render: (n) => <Link to={namespacePath(n.id)}>{n.id}</Link> },
    { key: 'description', header: 'Description', render: (n) => n.description ?? '' },
    { key: 'flows', header: 'Flows (child namespaces included)', className: 'num', render: (n) => list.data?.counts.get(n.id) ?? '' },
  ];
  return (
    <section>
      <div className="page-head"><h1>Namespaces</h1></div>
      <div className="filters" role="search">
        <SearchFilter filters={filters} label="Search namespaces" />
      </div>
      <ErrorBanner error={list.error} onRetry={list.reload} />
      {list.data && (
        <Table label="Namespaces" columns={columns} rows={list.data.results} rowKey={(n) => n.id}
          paging={{ page, size, total: list.data.total, onChange: setPaging }}
          empty={<EmptyState title={q ? 'No namespace matches this search' : 'No namespaces yet'}>Namespaces appear with their first flow.</EmptyState>} />
      )}
      {list.loading && !list.data && <p className="muted" role="status">Loading…</p>}
    </section>
  );
}
