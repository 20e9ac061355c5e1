// A link to an execution's page (/ui/executions/{namespace}/{flowId}/{id}), showing its id in monospace.
import { Link } from 'react-router';
import { executionPath } from '../paths';


export function ExecutionLink({ namespace, flowId, id }: { namespace: string; flowId: string; id: string }) {
  return <Link to={executionPath(namespace, flowId, id)}><code>{id}</code></Link>;
}
