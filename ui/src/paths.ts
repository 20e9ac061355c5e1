// The UI's page paths (router paths, below /ui; Kestra's), built in one place. A leaf module: the tab registries
// import their tabs, and the tabs (and shared components) link to other pages, so the paths cannot live in the registries.

export const DEFAULT_FLOW_TAB = 'overview';
export const DEFAULT_EXECUTION_TAB = 'gantt';
export const DEFAULT_NAMESPACE_TAB = 'overview';

const seg = (s: string): string => encodeURIComponent(s);

/** A flow's tab: /flows/edit/{namespace}/{id}/{tab}. */
export const flowPath = (namespace: string, id: string, tab: string = DEFAULT_FLOW_TAB): string =>
  `/flows/edit/${seg(namespace)}/${seg(id)}/${tab}`;

/** An execution's page, or one of its tabs: /executions/{namespace}/{flowId}/{id}[/{tab}]. */
export const executionPath = (namespace: string, flowId: string, id: string, tab?: string): string =>
  `/executions/${seg(namespace)}/${seg(flowId)}/${seg(id)}${tab ? `/${tab}` : ''}`;

/** A namespace's tab: /namespaces/edit/{namespace}/{tab}. */
export const namespacePath = (namespace: string, tab: string = DEFAULT_NAMESPACE_TAB): string =>
  `/namespaces/edit/${seg(namespace)}/${tab}`;
