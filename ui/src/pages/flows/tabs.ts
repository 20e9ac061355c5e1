// The flow page's tab registry: one entry per tab (its id is the last segment of the URL
// /ui/flows/edit/{namespace}/{id}/{tab}). Add a tab by writing its component in tabs/ and appending it here.
import type { Flow } from '../../api';
import { FlowDependencies } from './tabs/Dependencies';
import { FlowEdit } from './tabs/Edit';
import { FlowExecutions } from './tabs/Executions';
import { FlowLogs } from './tabs/Logs';
import { FlowOverview } from './tabs/Overview';
import { FlowRevisions } from './tabs/Revisions';
import { FlowTopology } from './tabs/Topology';
import { FlowTriggers } from './tabs/Triggers';
import type { PageTab } from '../../components/Tabs';

export interface FlowTabProps { flow: Flow; reload(): void }

export const FLOW_TABS: PageTab<FlowTabProps>[] = [
  { id: 'overview', label: 'Overview', component: FlowOverview },
  { id: 'topology', label: 'Topology', component: FlowTopology },
  { id: 'executions', label: 'Executions', component: FlowExecutions },
  { id: 'edit', label: 'Edit', component: FlowEdit },
  { id: 'revisions', label: 'Revisions', component: FlowRevisions },
  { id: 'triggers', label: 'Triggers', component: FlowTriggers },
  { id: 'logs', label: 'Logs', component: FlowLogs },
  { id: 'dependencies', label: 'Dependencies', component: FlowDependencies },
];
