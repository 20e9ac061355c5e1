// The namespace page's tab registry: one entry per tab (its id is the last segment of the URL
// /ui/namespaces/edit/{namespace}/{tab}). Add a tab by writing its component in tabs/ and appending it here.
import { NamespaceDependencies } from './tabs/Dependencies';
import { NamespaceEditor } from './tabs/Editor';
import { NamespaceFlows } from './tabs/Flows';
import { NamespaceKv } from './tabs/KvStore';
import { NamespaceOverview } from './tabs/Overview';
import type { PageTab } from '../../components/Tabs';

export interface NamespaceTabProps { namespace: string }

export const NAMESPACE_TABS: PageTab<NamespaceTabProps>[] = [
  { id: 'overview', label: 'Overview', component: NamespaceOverview },
  { id: 'editor', label: 'Editor', component: NamespaceEditor },
  { id: 'flows', label: 'Flows', component: NamespaceFlows },
  { id: 'kv', label: 'KV Store', component: NamespaceKv },
  { id: 'dependencies', label: 'Dependencies', component: NamespaceDependencies },
];
