// The execution page's tab registry: one entry per tab (its id is the last segment of the URL
// /ui/executions/{namespace}/{flowId}/{id}/{tab}); the first is the default. Add a tab by writing its component in
// tabs/ and appending it here. Each tab gets the live execution (updated from the follow stream while it runs).
import type { ComponentType } from 'react';
import type { Execution } from '../../api';
import { ExecutionGantt } from './tabs/Gantt';
import { ExecutionLogs } from './tabs/Logs';
import { ExecutionMetrics } from './tabs/Metrics';
import { ExecutionOutputs } from './tabs/Outputs';

export interface ExecutionTabProps { execution: Execution }
export interface ExecutionTab { id: string; label: string; component: ComponentType<ExecutionTabProps> }

export const EXECUTION_TABS: ExecutionTab[] = [
  { id: 'gantt', label: 'Gantt', component: ExecutionGantt },
  { id: 'logs', label: 'Logs', component: ExecutionLogs },
  { id: 'outputs', label: 'Outputs', component: ExecutionOutputs },
  { id: 'metrics', label: 'Metrics', component: ExecutionMetrics },
];

export const DEFAULT_EXECUTION_TAB = 'gantt';

/** The UI path of an execution's tab (router paths, below /ui). */
export const executionPath = (namespace: string, flowId: string, id: string, tab?: string): string =>
  `/executions/${encodeURIComponent(namespace)}/${encodeURIComponent(flowId)}/${encodeURIComponent(id)}${tab ? `/${tab}` : ''}`;
