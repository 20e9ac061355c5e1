// The graph pages in real headless Chromium over the real embedded server: a flow's topology draws the API's graph
// node for node (flowables as groups, errors/finally branches marked), zooms and shows a task's details; an
// execution's topology shows its task runs' states and follows them live; 1,000 task runs colour one node, not a
// thousand; a flow's and a namespace's dependencies show Subflow calls and Flow triggers in both directions (the
// namespace's as a tab of the namespace page); the Edit tab's graph preview redraws the unsaved text.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../support/wait.js';
import { BRANCHY } from './graph-flows.js';
import { startUiHarness, type UiHarness } from './harness.js';

const LOG = 'io.kestra.plugin.core.log.Log';

const PAUSING = `id: pausing
namespace: ui.graph
tasks:
  - id: first
    type: ${LOG}
    message: first
  - id: approve
    type: io.kestra.plugin.core.flow.Pause
  - id: after
    type: ${LOG}
    message: after
`;

const LOOP_VALUES = 1000;
const BIG = `id: big
namespace: ui.graph
tasks:
  - id: each
    type: io.kestra.plugin.core.flow.ForEach
    concurrencyLimit: 0
    values: [${Array.from({ length: LOOP_VALUES }, (_, i) => i).join(', ')}]
    tasks:
      - id: item
        type: io.kestra.plugin.core.debug.Return
        format: "{{ taskrun.value }}"
`;

const PARENT = `id: parent
namespace: ui.dep
tasks:
  - id: call
    type: io.kestra.plugin.core.flow.Subflow
    namespace: ui.dep
    flowId: child
`;
const PREVIEW = `id: preview\nnamespace: ui.graph\ntasks:\n  - id: first\n    type: ${LOG}\n    message: one\n`;
const CHILD = `id: child\nnamespace: ui.dep\ntasks:\n  - id: t\n    type: ${LOG}\n    message: child\n`;
const LISTENER = `id: listener
namespace: ui.other
tasks:
  - id: t
    type: ${LOG}
    message: heard
triggers:
  - id: after_child
    type: io.kestra.plugin.core.trigger.Flow
    conditions:
      - type: io.kestra.plugin.core.condition.ExecutionFlowCondition
        namespace: ui.dep
        flowId: child
`;

let h: UiHarness;
let bigId: string;
let branchyId: string;
beforeAll(async () => {
  h = await startUiHarness();
  for (const yaml of [BRANCHY, PAUSING, BIG, PARENT, CHILD, LISTENER, PREVIEW]) await h.api('/flows', { yaml });
  branchyId = (await h.api('/executions/ui.graph/branchy', { body: {} })).id;
  bigId = (await h.api('/executions/ui.graph/big', { body: {} })).id;
  await until(async () => (await h.api(`/executions/${branchyId}`)).state.current === 'SUCCESS', 'branchy to succeed');
  await until(async () => (await h.api(`/executions/${bigId}`)).state.current === 'SUCCESS', 'the 1,000-task-run execution to succeed', 90_000);
}, 150_000);
afterAll(async () => { await h?.close(); });

const graphCounts = (page: Page, label: string) => page.getByRole('group', { name: label }).evaluate((svg) => ({
  nodes: svg.querySelectorAll('[data-uid]').length,
  edges: svg.querySelectorAll('[data-edge]').length,
  clusters: svg.querySelectorAll('[data-cluster]').length,
}));

describe('flow topology', () => {
  it('draws every node, edge and group of the API graph, with errors/finally branches, zoom and task details', async () => {
    const api = await h.api('/flows/ui.graph/branchy/graph');
    const page = await h.signedInPage();
    await page.goto('/ui/flows/edit/ui.graph/branchy/topology');
    const svg = page.getByRole('group', { name: 'Flow topology' });
    await svg.waitFor();
    expect(await graphCounts(page, 'Flow topology')).toEqual({ nodes: api.nodes.length, edges: api.edges.length, clusters: api.clusters.length });
    // Flowables as groups with their children inside.
    expect(await svg.locator('[data-cluster="cluster_root.par"][data-relation="PARALLEL"]').count()).toBe(1);
    expect(await svg.locator('[data-cluster="cluster_root.pick"][data-relation="CHOICE"]').count()).toBe(1);
    // Errors and finally branches are drawn apart: their own edge kinds and node names.
    expect(await svg.locator('[data-edge][data-kind="ERROR"]').count()).toBeGreaterThanOrEqual(2);
    expect(await svg.locator('[data-edge][data-kind="FINALLY"]').count()).toBeGreaterThanOrEqual(2);
    await page.getByRole('button', { name: 'Task on_error (Log), errors' }).waitFor();
    await page.getByRole('button', { name: 'Task cleanup (Log), finally' }).waitFor();
    await page.getByRole('button', { name: 'Trigger hourly (Schedule)' }).waitFor();
    // Case labels of If and Switch.
    const labels = await svg.locator('.g-edge-label').allTextContents();
    expect(labels).toEqual(expect.arrayContaining(['then', 'else', 'a', 'b', 'defaults', 'on error']));

    const zoom = page.getByRole('toolbar', { name: 'Flow topology controls' }).locator('.graph-zoom');
    const percent = async () => Number((await zoom.textContent())!.replace('%', ''));
    const before = await percent();
    await page.getByRole('button', { name: 'Zoom in' }).click();
    expect(await percent()).toBeGreaterThan(before);
    // Fit shows the whole graph: every card inside the drawing.
    await page.getByRole('button', { name: 'Fit to view' }).click();
    expect(await percent()).toBeLessThanOrEqual(before);
    const inView = await svg.evaluate((el) => {
      const box = el.getBoundingClientRect();
      return [...el.querySelectorAll('[data-uid]')].every((n) => {
        const r = n.getBoundingClientRect();
        return r.left >= box.left - 1 && r.right <= box.right + 1 && r.top >= box.top - 1 && r.bottom <= box.bottom + 1;
      });
    });
    expect(inView).toBe(true);

    await page.getByRole('button', { name: 'Task case_b (Log)' }).click();
    const details = page.getByRole('complementary', { name: 'Task details' });
    await details.waitFor();
    expect(await details.textContent()).toContain('io.kestra.plugin.core.log.Log'.split('.').pop());
    expect(await details.locator('dd').first().textContent()).toBe('case_b');
    await h.screenshot(page, 'graph-flow-topology');
  });
});

describe('execution topology', () => {
  it('colours nodes by their task runs and follows a running execution live', async () => {
    const page = await h.signedInPage();
    await page.goto(`/ui/executions/ui.graph/branchy/${branchyId}/topology`);
    await page.getByRole('button', { name: 'Task case_b (Log), SUCCESS' }).waitFor();
    expect(await page.locator('[data-uid="root.pick.case_a"]').getAttribute('data-state')).toBeNull();
    expect(await page.locator('[data-uid="root.on_error"]').getAttribute('data-state')).toBeNull();

    const { id } = await h.api('/executions/ui.graph/pausing', { body: {} });
    await until(async () => (await h.api(`/executions/${id}`)).state.current === 'PAUSED', 'pausing to pause');
    await page.goto(`/ui/executions/ui.graph/pausing/${id}/topology`);
    // The execution is PAUSED; its Pause task's run stays RUNNING until resumed.
    await page.getByRole('button', { name: 'Task approve (Pause), RUNNING' }).waitFor();
    await page.getByLabel('Execution state').getByText('PAUSED').waitFor();
    expect(await page.locator('[data-uid="root.after"]').getAttribute('data-state')).toBeNull();
    await h.screenshot(page, 'graph-execution-paused');
    await h.api(`/executions/${id}/resume`, { method: 'POST' });
    // No reload: the follow stream brings the new states.
    await page.getByRole('button', { name: 'Task after (Log), SUCCESS' }).waitFor();
    await page.getByLabel('Execution state').getByText('SUCCESS').waitFor();
    await page.getByRole('button', { name: 'Task approve (Pause), SUCCESS' }).click();
    const runs = page.getByRole('table', { name: 'Task runs' });
    await runs.waitFor();
    expect(await runs.locator('tbody tr').count()).toBe(1);
    expect(await runs.locator('tbody tr').first().textContent()).toContain('SUCCESS');
  });

  it('renders an execution of 1,000 task runs as the flow graph, one node per task with its runs counted', async () => {
    const execution = await h.api(`/executions/${bigId}`);
    expect(execution.taskRunList.length).toBe(LOOP_VALUES + 1);
    const flowGraph = await h.api(`/flows/ui.graph/big/graph?revision=${execution.flowRevision}`);
    const page = await h.signedInPage();
    await page.goto(`/ui/executions/ui.graph/big/${bigId}/topology`);
    await page.getByRole('button', { name: `Task item (Return), SUCCESS (${LOOP_VALUES} runs)` }).waitFor();
    const counts = await graphCounts(page, 'Execution topology');
    expect(counts.nodes).toBe(flowGraph.nodes.length);
    expect(counts.nodes).toBeLessThan(20);
    // The whole page stays small: no element per task run.
    expect(await page.evaluate(() => document.querySelectorAll('*').length)).toBeLessThan(600);
    await page.getByRole('button', { name: /^Task item/ }).click();
    const runs = page.getByRole('table', { name: 'Task runs' });
    await runs.waitFor();
    expect(await runs.locator('tbody tr').count()).toBe(50);
    await page.getByText(`and ${LOOP_VALUES - 50} more task runs`).waitFor();
    await h.screenshot(page, 'graph-execution-1000');
  });
});

describe('dependencies', () => {
  it("shows a flow's callers and listeners both ways, and a namespace's graph across flows", async () => {
    const api = await h.api('/flows/ui.dep/child/dependencies');
    expect(api.edges).toHaveLength(2);
    const page = await h.signedInPage();
    await page.goto('/ui/flows/edit/ui.dep/child/dependencies');
    const svg = page.getByRole('group', { name: 'Flow dependencies' });
    await svg.waitFor();
    expect(await graphCounts(page, 'Flow dependencies')).toEqual({ nodes: 3, edges: 2, clusters: 0 });
    expect(await svg.locator('[data-edge][data-kind="FLOW_TASK"] .g-edge-label').textContent()).toBe('subflow');
    expect(await svg.locator('[data-edge][data-kind="FLOW_TRIGGER"] .g-edge-label').textContent()).toBe('flow trigger');
    expect(await svg.locator('.g-focus').getAttribute('data-uid')).toBe('main_ui.dep_child');
    await page.getByRole('button', { name: 'Flow ui.dep.child' }).click();
    const details = page.getByRole('complementary', { name: 'Flow details' });
    expect(await details.getByRole('list', { name: 'Upstream flows' }).textContent()).toContain('ui.dep.parent');
    expect(await details.getByRole('list', { name: 'Downstream flows' }).textContent()).toContain('ui.other.listener');
    await h.screenshot(page, 'graph-flow-dependencies');

    // From the caller's side: the same relation, seen downstream.
    await page.goto('/ui/flows/edit/ui.dep/parent/dependencies');
    await page.getByRole('button', { name: 'Flow ui.dep.parent' }).click();
    expect(await page.getByRole('list', { name: 'Downstream flows' }).textContent()).toContain('ui.dep.child');
    expect(await graphCounts(page, 'Flow dependencies')).toEqual({ nodes: 2, edges: 1, clusters: 0 });
    await page.getByLabel(/Expand all/).check();
    await until(async () => (await graphCounts(page, 'Flow dependencies')).nodes === 3, 'the expanded graph');

    const ns = await h.api('/namespaces/ui.dep/dependencies');
    await page.goto('/ui/namespaces/edit/ui.dep/dependencies');
    await page.getByRole('group', { name: 'Namespace dependencies' }).waitFor();
    // A tab of the namespace page (its registry), not a page of its own.
    expect(await page.getByRole('heading', { name: 'ui.dep', exact: true }).count()).toBe(1);
    expect(await page.getByRole('tab', { name: 'Dependencies' }).getAttribute('aria-selected')).toBe('true');
    await page.getByRole('tab', { name: 'Overview' }).waitFor();
    expect(await graphCounts(page, 'Namespace dependencies')).toEqual({ nodes: ns.nodes.length, edges: ns.edges.length, clusters: 0 });
    expect(ns.nodes.length).toBe(3);
    await h.screenshot(page, 'graph-namespace-dependencies');
  });
});

describe('graph preview beside the flow editor', () => {
  it("redraws the Edit tab's preview from the unsaved text: a task added in the editor appears", async () => {
    const page = await h.signedInPage();
    page.setDefaultTimeout(15_000);
    const graphRequests: string[] = [];
    page.on('request', (r) => { if (r.url().endsWith('/api/v1/flows/graph') && r.method() === 'POST') graphRequests.push(r.postData() ?? ''); });
    await page.goto('/ui/flows/edit/ui.graph/preview/edit');
    const panel = page.getByRole('complementary', { name: 'Graph preview' });
    await panel.getByRole('button', { name: 'Task first (Log)' }).waitFor();
    const before = await graphCounts(page, 'Graph preview');
    expect(await panel.getByRole('button', { name: 'Task second (Log)' }).count()).toBe(0);

    const editor = page.getByRole('textbox', { name: 'Flow source' });
    await editor.click();
    await page.keyboard.press('Control+End');
    await page.keyboard.insertText(`  - id: second\n    type: ${LOG}\n    message: two\n`);
    await panel.getByRole('button', { name: 'Task second (Log)' }).waitFor();
    const after = await graphCounts(page, 'Graph preview');
    expect(after.nodes).toBe(before.nodes + 1);
    expect(after.edges).toBe(before.edges + 1);
    // Drawn from the text being edited (nothing saved): the last request carried the new task.
    expect(graphRequests.at(-1)).toContain('id: second');
    expect((await h.api('/flows/ui.graph/preview')).revision).toBe(1);
    await h.screenshot(page, 'graph-edit-preview');
  });
});
