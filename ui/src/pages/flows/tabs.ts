// The flow page's tab registry: one entry per tab (its id is the last segment of the URL
// /ui/flows/edit/{namespace}/{id}/{tab}). Add a tab by writing its component in tabs/ and appending it here.
import type { ComponentType } from 'react';
import type { Flow } from '../../api';
import { FlowEdit } from './tabs/Edit';
import { FlowOverview } from './tabs/Overview';
import { FlowRevisions } from './tabs/Revisions';

export interface FlowTabProps { flow: Flow; reload(): void }
export interface FlowTab { id: string; label: string; component: ComponentType<FlowTabProps> }

export const FLOW_TABS: FlowTab[] = [
  { id: 'overview', label: 'Overview', component: FlowOverview },
  { id: 'edit', label: 'Edit', component: FlowEdit },
  { id: 'revisions', label: 'Revisions', component: FlowRevisions },
];

export const DEFAULT_FLOW_TAB = 'overview';

/** The UI path of a flow's tab (router paths, below /ui). */
export const flowPath = (namespace: string, id: string, tab: string = DEFAULT_FLOW_TAB): string =>
  `/flows/edit/${encodeURIComponent(namespace)}/${encodeURIComponent(id)}/${tab}`;
