// The execution page's Topology tab: the graph of the flow revision it ran (laid out once), its nodes coloured by the
// execution's task runs (indexed by task id), live: the page replaces the execution on every event of its follow
// stream, which only recolours.
import { api } from '../../../api';
import { ErrorBanner } from '../../../components/ErrorBanner';
import { FlowGraphPanel } from '../../../components/graph/FlowGraphPanel';
import { useApi } from '../../../hooks';
import type { ExecutionTabProps } from '../tabs';

export function ExecutionTopology({ execution }: ExecutionTabProps) {
  const { namespace, flowId, flowRevision } = execution;
  // The flow's graph, not the execution's: one node per task however many times it ran (GET /executions/{id}/graph
  // has a node per task run, which a 1,000-iteration loop would turn into 1,000 cards).
  const graph = useApi((signal) => api.flowGraph(namespace, flowId, flowRevision, signal), [namespace, flowId, flowRevision]);
  return (
    <div>
      <ErrorBanner error={graph.error} onRetry={graph.reload} />
      {graph.loading && !graph.data && <p className="muted" role="status">Loading the graph…</p>}
      {graph.data && <FlowGraphPanel graph={graph.data} label="Execution topology" runs={execution.taskRunList} />}
    </div>
  );
}
