// The flow's Logs tab: the log lines of all its executions, searched and filtered by level, paged on the server.
import { LogSearch } from '../../logs/LogsSearch';
import type { FlowTabProps } from '../tabs';

export function FlowLogs({ flow }: FlowTabProps) {
  return <LogSearch namespace={flow.namespace} flowId={flow.id} />;
}
