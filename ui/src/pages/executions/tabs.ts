// The execution page's tab registry: one entry per tab (its id is the last segment of the URL
// /ui/executions/{namespace}/{flowId}/{id}/{tab}); the first is the default. Add a tab by writing its component in
// tabs/ and appending it here. Each tab gets the live execution (updated from the follow stream while it runs).
import type { Execution } from '../../api';
import { ExecutionGantt } from './tabs/Gantt';
import { ExecutionLogs } from './tabs/Logs';
import { ExecutionMetrics } from './tabs/Metrics';
import { ExecutionOutputs } from './tabs/Outputs';
import { ExecutionTopology } from './tabs/Topology';
import type { PageTab } from '../../components/Tabs';

export interface ExecutionTabProps { execution: Execution }

export const EXECUTION_TABS: PageTab<ExecutionTabProps>[] = [
  { id: 'gantt', label: 'Gantt', component: ExecutionGantt },
  { id: 'topology', label: 'Topology', component: ExecutionTopology },
  { id: 'logs', label: 'Logs', component: ExecutionLogs },
  { id: 'outputs', label: 'Outputs', component: ExecutionOutputs },
  { id: 'metrics', label: 'Metrics', component: ExecutionMetrics },
];
