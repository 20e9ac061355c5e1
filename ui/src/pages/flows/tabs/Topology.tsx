// The flow's Topology tab: its graph (the saved revision's FlowGraph), flowables as groups, errors/finally branches.
import { api } from '../../../api';
import { ErrorBanner } from '../../../components/ErrorBanner';
import { FlowGraphPanel } from '../../../components/graph/FlowGraphPanel';
import { useApi } from '../../../hooks';
import type { FlowTabProps } from '../tabs';

export function FlowTopology({ flow }: FlowTabProps) {
  const graph = useApi((signal) => api.flowGraph(flow.namespace, flow.id, flow.revision, signal), [flow.namespace, flow.id, flow.revision]);
  return (
    <div>
      <ErrorBanner error={graph.error} onRetry={graph.reload} />
      {graph.loading && !graph.data && <p className="muted" role="status">Loading the graph…</p>}
      {graph.data && <FlowGraphPanel graph={graph.data} label="Flow topology" />}
    </div>
  );
}
