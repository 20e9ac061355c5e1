// The flow page's tab registry: one entry per tab (its id is the last segment of the URL
// /ui/flows/edit/{namespace}/{id}/{tab}). Add a tab by writing its component in tabs/ and appending it here.
import type { ComponentType } from 'react';
import type { Flow } from '../../api';
import { FlowExecutions } from './tabs/Executions';
import { FlowLogs } from './tabs/Logs';
import { FlowOverview } from './tabs/Overview';
import { FlowTriggers } from './tabs/Triggers';

export interface FlowTabProps { flow: Flow; reload(): void }
export interface FlowTab { id: string; label: string; component: ComponentType<FlowTabProps> }

export const FLOW_TABS: FlowTab[] = [
  { id: 'overview', label: 'Overview', component: FlowOverview },
  { id: 'executions', label: 'Executions', component: FlowExecutions },
  { id: 'triggers', label: 'Triggers', component: FlowTriggers },
  { id: 'logs', label: 'Logs', component: FlowLogs },
];

export const DEFAULT_FLOW_TAB = 'overview';

/** The UI path of a flow's tab (router paths, below /ui). */
export const flowPath = (namespace: string, id: string, tab: string = DEFAULT_FLOW_TAB): string =>
  `/flows/edit/${encodeURIComponent(namespace)}/${encodeURIComponent(id)}/${tab}`;
