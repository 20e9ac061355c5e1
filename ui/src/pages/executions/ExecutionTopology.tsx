// An execution's topology: the graph of the flow revision it ran (laid out once), its nodes coloured by the
// execution's task runs (indexed by task id), live while it runs. `ExecutionTopology` is the tab's body for the
// execution page; `ExecutionTopologyPage` is the route /ui/executions/{namespace}/{flowId}/{id}/topology on its own,
// loading the execution and following it through GET /executions/{id}/follow until it ends.
import { useCallback, useState } from 'react';
import { Link, useParams } from 'react-router';
import { api, type ExecutionWithRuns } from '../../api';
import { ErrorBanner } from '../../components/ErrorBanner';
import { FlowGraphPanel } from '../../components/graph/FlowGraphPanel';
import { StateBadge } from '../../components/StateBadge';
import { useApi, useSse } from '../../hooks';

export function ExecutionTopology({ execution }: { execution: ExecutionWithRuns }) {
  const { namespace, flowId, flowRevision } = execution;
  // The flow's graph, not the execution's: one node per task however many times it ran, so a refresh only recolours.
  const graph = useApi((signal) => api.flowGraph(namespace, flowId, flowRevision, signal), [namespace, flowId, flowRevision]);
  return (
    <div>
      <ErrorBanner error={graph.error} onRetry={graph.reload} />
      {graph.loading && !graph.data && <p className="muted" role="status">Loading the graph…</p>}
      {graph.data && <FlowGraphPanel graph={graph.data} label="Execution topology" runs={execution.taskRunList ?? []} />}
    </div>
  );
}

/** The newest snapshot of an execution: loaded once, then replaced by each event of its follow stream. */
export function useLiveExecution(id: string): { execution?: ExecutionWithRuns; error?: unknown; loading: boolean; reload(): void } {
  const loaded = useApi((signal) => api.getExecution(id, signal), [id]);
  const [live, setLive] = useState<ExecutionWithRuns>();
  const onEvent = useCallback((e: { id?: string; data: string }) => {
    if (e.id !== 'progress' && e.id !== 'end') return;
    try { setLive(JSON.parse(e.data) as ExecutionWithRuns); } catch { /* a partial event is followed by a whole one */ }
  }, []);
  const sse = useSse(loaded.data ? `/executions/${encodeURIComponent(id)}/follow` : undefined, onEvent, { isEnd: (e) => e.id === 'end' });
  const execution = live?.id === id ? live : loaded.data;
  return { execution, error: loaded.error ?? sse.error, loading: loaded.loading, reload: loaded.reload };
}

export function ExecutionTopologyPage() {
  const { namespace = '', flowId = '', id = '' } = useParams();
  const { execution, error, loading, reload } = useLiveExecution(id);
  return (
    <section>
      <div className="page-head">
        <div>
          <div className="breadcrumb">
            <Link to="/flows">Flows</Link> / <Link to={`/flows/edit/${encodeURIComponent(namespace)}/${encodeURIComponent(flowId)}`}>{namespace}.{flowId}</Link>
          </div>
          <h1>Execution <code>{id}</code></h1>
        </div>
        {execution && <span aria-label="Execution state"><StateBadge state={execution.state.current} /></span>}
      </div>
      <ErrorBanner error={error} onRetry={reload} />
      {loading && !execution && <p className="muted" role="status">Loading…</p>}
      {execution && <ExecutionTopology execution={execution} />}
    </section>
  );
}
