// The web UI in the cluster home, in real headless Chromium: the cluster API entry point (api/kube-main.ts) and operator
// (operator/kube/main.ts) against the Kubernetes API test server (TokenReview and SubjectAccessReview answered by a
// RoleBinding-like policy), a real PostgreSQL log store and S3 bucket, task Pods run by the simulated kubelet. A user
// signs in through the form with a ServiceAccount-like bearer token and sees what that token may see: a reader sees the
// flows of both flow namespaces, their flow and execution pages; a token allowed flows but not executions sees the
// flows, and an execution page shows the API's 403 with its message; a token bound in another Kubernetes namespace
// sees the 403 on the flows list; an unknown token gets the sign-in form again. (What a token may see is decided per
// resource kind in the Kubernetes namespace flowpilot watches, where every flow lives: the cluster home has no
// permission per flow namespace, so a token cannot be limited to team.alpha's flows.)
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../support/wait.js';
import { ENTRY_NS as KNS, startEntrypointCluster, type EntrypointCluster } from '../kube/entrypoint-cluster.js';
import { startUiBrowser, type UiBrowser } from './harness.js';

const P = 'ai.service.plugin.core';
const TEAM_A = 'team.alpha';
const TEAM_B = 'team.beta';

/**
 * Users' Roles, as RoleBindings would give them: `reader` reads every flowpilot resource in the flowpilot namespace;
 * `flow-reader` reads flows only; `elsewhere` reads everything, but bound in another Kubernetes namespace.
 */
const READ = ['get', 'list', 'watch'];
const USERS: Record<string, { namespace: string; resources: string[] }> = {
  reader: { namespace: KNS, resources: ['flows', 'executions', 'flownamespaces', 'triggerstates', 'kvpairs', 'namespacefiles'] },
  'flow-reader': { namespace: KNS, resources: ['flows', 'flownamespaces'] },
  elsewhere: { namespace: 'other', resources: ['flows', 'executions', 'flownamespaces'] },
};

let cluster: EntrypointCluster;
let ui: UiBrowser;
const ids: Record<string, string> = {};

async function asAdmin(path: string, init: { method?: string; yaml?: string } = {}): Promise<any> {
  const headers: Record<string, string> = { authorization: 'Bearer admin-token' };
  if (init.yaml) headers['content-type'] = 'application/x-yaml';
  const res = await fetch(`http://127.0.0.1:${cluster.api.port}/api/v1${path}`, { method: init.method ?? (init.yaml ? 'POST' : 'GET'), headers, body: init.yaml });
  const text = await res.text();
  if (!res.ok) throw new Error(`${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

beforeAll(async () => {
  cluster = await startEntrypointCluster({
    users: Object.keys(USERS),
    authorize: (a) => {
      const role = USERS[a.user];
      if (!role) return undefined;
      return a.group === 'flowpilot.io' && a.namespace === role.namespace && role.resources.includes(a.resource ?? '') && READ.includes(a.verb);
    },
  });
  ui = await startUiBrowser(`http://127.0.0.1:${cluster.api.port}`);

  for (const ns of [TEAM_A, TEAM_B]) {
    await asAdmin('/flows', { yaml: `id: greet\nnamespace: ${ns}\ndescription: "Greets **${ns}**"\ntasks:\n  - id: hello\n    type: ${P}.log.Log\n    message: "hello from ${ns}"\n` });
    ids[ns] = (await asAdmin(`/executions/${ns}/greet`, { method: 'POST' })).id;
  }
  await asAdmin('/flows', { yaml: `id: second\nnamespace: ${TEAM_A}\ntasks:\n  - id: ret\n    type: ${P}.debug.Return\n    format: two\n` });
  for (const id of Object.values(ids)) {
    await until(async () => (await asAdmin(`/executions/${id}`)).state.current === 'SUCCESS', `execution ${id} to succeed`, 120_000);
  }
}, 240_000);

afterAll(async () => {
  await ui?.close();
  await cluster?.close();
});

/** A fresh page signed in through the sign-in form with a bearer token, as a user would. */
async function signIn(token: string, path: string): Promise<Page> {
  const { page } = await ui.newPage();
  await page.goto(path);
  await page.getByRole('heading', { name: 'Sign in to flowpilot' }).waitFor();
  await page.getByRole('radio', { name: 'Token' }).check();
  await page.getByRole('textbox', { name: 'Token' }).fill(token);
  await page.getByRole('button', { name: 'Sign in' }).click();
  return page;
}
const rows = (page: Page, table: string) => page.getByRole('table', { name: table }).locator('tbody tr');
const badge = (page: Page) => page.getByRole('status', { name: 'Execution state' });

describe('the web UI in the cluster home', () => {
  it('asks an unknown token to sign in again', async () => {
    const page = await signIn('not-a-service-account-token', '/ui/flows');
    await page.getByRole('alert').filter({ hasText: 'The server refused these credentials.' }).waitFor();
    expect(await page.getByRole('heading', { name: 'Sign in to flowpilot' }).isVisible()).toBe(true);
  });

  it('shows a reader the flows of both namespaces, a flow page and an execution page with its logs', async () => {
    const page = await signIn('reader-token', '/ui/flows');
    await page.getByRole('heading', { name: 'Flows' }).waitFor();
    await until(async () => (await rows(page, 'Flows').count()) === 3, 'the three flows', 15_000);
    const shown = await rows(page, 'Flows').allTextContents();
    expect(shown.filter((r) => r.includes(TEAM_A))).toHaveLength(2);
    expect(shown.filter((r) => r.includes(TEAM_B))).toHaveLength(1);
    await ui.screenshot(page, 'cluster-flows');

    await page.goto(`/ui/flows/edit/${TEAM_B}/greet/overview`);
    await page.getByRole('heading', { name: 'greet', level: 1 }).waitFor();
    await page.getByText(`Greets ${TEAM_B}`).waitFor();
    await ui.screenshot(page, 'cluster-flow');

    await page.goto(`/ui/executions/${TEAM_B}/greet/${ids[TEAM_B]}/logs`);
    await badge(page).getByText('SUCCESS').waitFor();
    await rows(page, 'Log lines').filter({ hasText: `hello from ${TEAM_B}` }).waitFor();
    expect(await page.getByRole('alert').count()).toBe(0);
    await ui.screenshot(page, 'cluster-execution');
  });

  it('shows a token allowed flows but not executions the flows, and the API\'s 403 with its message on an execution page', async () => {
    const page = await signIn('flow-reader-token', '/ui/flows');
    // The flows list, though the last execution of each (POST /executions/latest) is refused to this token.
    await page.getByRole('heading', { name: 'Flows' }).waitFor();
    await until(async () => (await rows(page, 'Flows').count()) === 3, 'the three flows', 15_000);
    expect(await page.getByRole('alert').count()).toBe(0);
    expect(await rows(page, 'Flows').first().getByText('not visible').count()).toBe(1);
    await ui.screenshot(page, 'cluster-flows-without-executions');

    await page.goto(`/ui/flows/edit/${TEAM_A}/greet/overview`);
    await page.getByRole('heading', { name: 'greet', level: 1 }).waitFor();
    await page.getByText(`Greets ${TEAM_A}`).waitFor();
    // Its recent executions are refused: that section says so, the rest of the page is there.
    await page.getByRole('alert').filter({ hasText: 'Error 403' }).waitFor();
    await ui.screenshot(page, 'cluster-flow-without-executions');

    await page.goto(`/ui/executions/${TEAM_A}/greet/${ids[TEAM_A]}`);
    const alert = page.getByRole('alert').filter({ hasText: 'Error 403' });
    await alert.waitFor();
    expect(await alert.textContent()).toContain('Forbidden: user "flow-reader" cannot get resource "executions.flowpilot.io" in namespace "flowpilot"');
    // Not the sign-in form: the token is valid, it may just not read executions.
    expect(await page.getByRole('heading', { name: 'Sign in to flowpilot' }).count()).toBe(0);
    await ui.screenshot(page, 'cluster-execution-forbidden');
  });

  it('shows a token bound in another Kubernetes namespace the 403 on the flows list, not a blank page', async () => {
    const page = await signIn('elsewhere-token', '/ui/flows');
    await page.getByRole('heading', { name: 'Flows' }).waitFor();
    const alert = page.getByRole('alert').filter({ hasText: 'Error 403' });
    await alert.waitFor();
    expect(await alert.textContent()).toContain('Forbidden: user "elsewhere" cannot list resource "flows.flowpilot.io" in namespace "flowpilot"');
    expect(await page.getByRole('heading', { name: 'Sign in to flowpilot' }).count()).toBe(0);
    await ui.screenshot(page, 'cluster-flows-forbidden');
  });
});
