// THE route table of the web UI (served under /ui; paths follow Kestra's so bookmarks carry over). To add a page:
// write it under pages/, add one entry here; give it `nav` to list it in the left navigation. See ui/README.md.
import type { ReactElement } from 'react';
import { Navigate, type RouteObject } from 'react-router';
import { App } from './App';
import type { NavItem } from './components/Layout';
import { Dashboard } from './pages/dashboard/Dashboard';
import { ExecutionPage } from './pages/executions/ExecutionPage';
import { ExecutionsList } from './pages/executions/ExecutionsList';
import { FlowNew } from './pages/flows/FlowNew';
import { FlowPage } from './pages/flows/FlowPage';
import { FlowsList } from './pages/flows/FlowsList';
import { LogsSearch } from './pages/logs/LogsSearch';
import { NamespacePage } from './pages/namespaces/NamespacePage';
import { NamespacesList } from './pages/namespaces/NamespacesList';
import { NotFound } from './pages/NotFound';
import { TriggersList } from './pages/triggers/TriggersList';

export interface PageRoute {
  /** Path below /ui, without the leading slash (react-router syntax: `:param`, `:param?`). */
  path: string;
  element: ReactElement;
  /** Shown in the left navigation, in table order. */
  nav?: string;
}

export const PAGES: PageRoute[] = [
  { path: 'dashboard', element: <Dashboard />, nav: 'Dashboard' },
  { path: 'flows', element: <FlowsList />, nav: 'Flows' },
  { path: 'flows/new', element: <FlowNew /> },
  { path: 'flows/edit/:namespace/:id/:tab?', element: <FlowPage /> },
  { path: 'executions', element: <ExecutionsList />, nav: 'Executions' },
  { path: 'executions/:namespace/:flowId/:id/:tab?', element: <ExecutionPage /> },
  { path: 'namespaces', element: <NamespacesList />, nav: 'Namespaces' },
  { path: 'namespaces/edit/:namespace/:tab?', element: <NamespacePage /> },
  { path: 'logs', element: <LogsSearch />, nav: 'Logs' },
  { path: 'triggers', element: <TriggersList />, nav: 'Triggers' },
];

/** Where `/ui` itself leads. */
const HOME = '/dashboard';

const nav: NavItem[] = PAGES.filter((p) => p.nav).map((p) => ({ to: `/${p.path}`, label: p.nav! }));

export const routes: RouteObject[] = [{
  path: '/',
  element: <App nav={nav} />,
  children: [
    { index: true, element: <Navigate to={HOME} replace /> },
    ...PAGES.map((p) => ({ path: p.path, element: p.element })),
    { path: '*', element: <NotFound /> },
  ],
}];
