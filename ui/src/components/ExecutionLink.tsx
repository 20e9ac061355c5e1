// A link to an execution's page (/ui/executions/{namespace}/{flowId}/{id}), showing its id in monospace.
import { Link } from 'react-router';

export const executionPath = (namespace: string, flowId: string, id: string): string =>
  `/executions/${encodeURIComponent(namespace)}/${encodeURIComponent(flowId)}/${encodeURIComponent(id)}`;

export function ExecutionLink({ namespace, flowId, id }: { namespace: string; flowId: string; id: string }) {
  return <Link to={executionPath(namespace, flowId, id)}><code>{id}</code></Link>;
}
