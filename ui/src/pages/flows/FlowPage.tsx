// /ui/flows/edit/{namespace}/{id}[/{tab}]: the flow's header and its tab bar (tabs.ts), the tab chosen by the URL.
import { Link, useParams } from 'react-router';
import { api } from '../../api';
import { EmptyState } from '../../components/EmptyState';
import { ErrorBanner } from '../../components/ErrorBanner';
import { Tabs } from '../../components/Tabs';
import { useApi } from '../../hooks';
import { ExecuteButton } from './ExecuteButton';
import { FLOW_TABS } from './tabs';
import { DEFAULT_FLOW_TAB, flowPath } from '../../paths';

export function FlowPage() {
  const { namespace = '', id = '', tab = DEFAULT_FLOW_TAB } = useParams();
  const flow = useApi((signal) => api.getFlow(namespace, id, signal), [namespace, id]);
  const current = FLOW_TABS.find((t) => t.id === tab);
  return (
    <section>
      <div className="page-head">
        <div>
          <div className="breadcrumb"><Link to="/flows">Flows</Link> / <Link to={`/flows?namespace=${encodeURIComponent(namespace)}`}>{namespace}</Link></div>
          <h1>{id}</h1>
        </div>
        <div className="row-gap">
          {flow.data?.disabled && <span className="badge badge-muted">disabled</span>}
          {flow.data && <ExecuteButton flow={flow.data} />}
        </div>
      </div>
      <Tabs label="Flow" tabs={FLOW_TABS} current={tab} to={(t) => flowPath(namespace, id, t)} />
      <ErrorBanner error={flow.error} onRetry={flow.reload} />
      {!current && <EmptyState title={`This flow has no tab '${tab}'`} />}
      {current && flow.data && <current.component flow={flow.data} reload={flow.reload} />}
      {flow.loading && !flow.data && <p className="muted" role="status">Loading…</p>}
    </section>
  );
}
