// /ui/triggers: every trigger of every flow (GET /triggers/search, paged on the server), searched and filtered by
// namespace, with its state (enabled, last and next dates, lock, backfill) and the actions disable/enable and unlock.
import { useState } from 'react';
import { Link } from 'react-router';
import { api, type TriggerSearchItem } from '../../api';
import { DateTime } from '../../components/DateTime';
import { EmptyState } from '../../components/EmptyState';
import { ErrorBanner } from '../../components/ErrorBanner';
import { NamespaceSelect } from '../../components/NamespaceSelect';
import { ExecutionLink } from '../../components/ExecutionLink';
import { SearchFilter } from '../../components/Filters';
import { Table, usePaging, type Column } from '../../components/Table';
import { TriggerActions } from '../../components/TriggerActions';
import { useApi, useUrlFilters } from '../../hooks';
import { flowPath } from '../../paths';


const short = (type: string): string => type.split('.').pop() ?? type;

export function TriggersList() {
  const filters = useUrlFilters();
  const q = filters.value('q');
  const namespace = filters.value('namespace');
  const { page, size, setPaging } = usePaging();
  const [actionError, setActionError] = useState<unknown>();

  const list = useApi((signal) => api.searchTriggers({ q: q || undefined, namespace: namespace || undefined, page, size }, signal), [q, namespace, page, size]);
  const done = () => { setActionError(undefined); list.reload(); };

  const columns: Column<TriggerSearchItem>[] = [
    { key: 'id', header: 'Trigger', render: ({ triggerContext: t }) => <code>{t.triggerId}</code> },
    { key: 'flow', header: 'Flow', render: ({ triggerContext: t }) => <Link to={flowPath(t.namespace, t.flowId, 'triggers')}>{t.flowId}</Link> },
    { key: 'namespace', header: 'Namespace', render: ({ triggerContext: t }) => t.namespace },
    { key: 'type', header: 'Type', render: ({ triggerContext: t }) => <span title={t.type}>{short(t.type)}</span> },
    { key: 'state', header: 'State', render: ({ triggerContext: t }) => (t.disabled ? <span className="badge badge-muted">disabled</span> : <span className="badge badge-ok">enabled</span>) },
    { key: 'last', header: 'Last date', render: ({ triggerContext: t }) => <DateTime value={t.date} /> },
    { key: 'next', header: 'Next date', render: ({ triggerContext: t }) => <DateTime value={t.nextExecutionDate} /> },
    {
      key: 'lock', header: 'Locked by', render: ({ triggerContext: t }) => (t.executionId
        ? <ExecutionLink namespace={t.namespace} flowId={t.flowId} id={t.executionId} /> : <span className="muted">–</span>),
    },
    { key: 'backfill', header: 'Backfill', render: ({ triggerContext: t }) => (t.backfill ? (t.backfill.paused ? 'paused' : 'running') : <span className="muted">–</span>) },
    { key: 'actions', header: 'Actions', render: ({ triggerContext: t }) => <TriggerActions t={t} onDone={done} onError={setActionError} /> },
  ];

  return (
    <section>
      <div className="page-head"><h1>Triggers</h1></div>
      <div className="filters" role="search">
        <SearchFilter filters={filters} label="Search triggers" />
        <NamespaceSelect value={namespace} onChange={(ns) => filters.set('namespace', ns)} />
      </div>
      <ErrorBanner error={actionError ?? list.error} onRetry={list.reload} />
      {list.data && (
        <Table label="Triggers" columns={columns} rows={list.data.results}
          rowKey={({ triggerContext: t }) => `${t.namespace}/${t.flowId}/${t.triggerId}`}
          paging={{ page, size, total: list.data.total, onChange: setPaging }}
          empty={<EmptyState title={q || namespace ? 'No trigger matches these filters' : 'No flow has a trigger'} />} />
      )}
      {list.loading && !list.data && <p className="muted" role="status">Loading…</p>}
    </section>
  );
}
