// The trigger views in real headless Chromium over the real embedded server with its scheduler on: /ui/triggers lists
// every trigger and disables/enables one (the state read back through the API); the flow's Triggers tab starts a
// backfill with start, end and an input (the scheduler creates its executions, which the flow's Executions tab then
// lists), and pauses, resumes and deletes a backfill that is still running (its trigger disabled, so it waits).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../support/wait.js';
import { startUiHarness, type UiHarness } from './harness.js';

const LOG = 'io.kestra.plugin.core.log.Log';
const SCHEDULE = 'io.kestra.plugin.core.trigger.Schedule';
// Yearly on January 1st: never due while the test runs, so only backfills create executions.
const scheduled = (id: string) => `id: ${id}
namespace: ui.trig
inputs:
  - id: who
    type: STRING
    defaults: nobody
triggers:
  - id: yearly
    type: ${SCHEDULE}
    cron: "0 0 1 1 *"
tasks:
  - id: t
    type: ${LOG}
    message: "hello {{ inputs.who }}"
`;

let h: UiHarness;
beforeAll(async () => {
  h = await startUiHarness({ env: { TRIGGERS: 'true' } });
  await h.api('/flows', { yaml: scheduled('backfilled') });
  await h.api('/flows', { yaml: scheduled('waiting') });
}, 120_000);
afterAll(async () => { await h?.close(); });

const triggerState = async (flowId: string) => (await h.api(`/triggers/ui.trig/${flowId}`)).results[0];

describe('/ui/triggers', () => {
  it('lists the triggers and disables then enables one', async () => {
    const page = await h.signedInPage();
    await page.goto('/ui/triggers');
    const rows = page.getByRole('table', { name: 'Triggers' }).locator('tbody tr');
    await rows.first().waitFor();
    expect(await rows.count()).toBe(2);
    const row = rows.filter({ has: page.getByRole('link', { name: 'waiting' }) });
    expect(await row.textContent()).toMatch(/yearly.*Schedule.*enabled/);
    await h.screenshot(page, 'triggers-list');

    await row.getByRole('button', { name: 'Disable trigger yearly' }).click();
    await row.getByText('disabled', { exact: true }).waitFor();
    expect((await triggerState('waiting')).disabled).toBe(true);
    await row.getByRole('button', { name: 'Enable trigger yearly' }).click();
    await row.getByText('enabled', { exact: true }).waitFor();
    expect((await triggerState('waiting')).disabled).toBe(false);
  });
});

describe("the flow's Triggers tab", () => {
  it('starts a backfill with start, end and inputs; the scheduler creates its executions', async () => {
    const page = await h.signedInPage();
    await page.goto('/ui/flows/edit/ui.trig/backfilled/triggers');
    const form = page.getByRole('form', { name: 'Backfill yearly' });
    await form.getByLabel('Backfill start').fill('2021-06-01T00:00');
    await form.getByLabel('Backfill end').fill('2023-06-01T00:00');
    await form.getByLabel('Input who').fill('backfill');
    await h.screenshot(page, 'flow-triggers-backfill-form');
    await form.getByRole('button', { name: 'Start backfill' }).click();

    // 2022-01-01 and 2023-01-01: two executions, with the input given.
    const runs = await until(async () => {
      const page1 = await h.api('/executions/flows/ui.trig/backfilled?size=10');
      return page1.total === 2 && page1.results.every((e: any) => e.state.current === 'SUCCESS') && page1.results;
    }, 'the two backfill executions to succeed');
    expect(runs.map((e: any) => e.inputs.who)).toEqual(['backfill', 'backfill']);
    expect(runs.map((e: any) => String(e.trigger?.variables?.date).slice(0, 10)).sort()).toEqual(['2022-01-01', '2023-01-01']);
    await until(async () => (await triggerState('backfilled')).backfill === null, 'the backfill to end');

    await page.getByRole('tab', { name: 'Executions' }).click();
    const rows = page.getByRole('table', { name: 'Flow executions' }).locator('tbody tr');
    await until(async () => (await rows.count()) === 2, 'the two executions listed');
    expect(await rows.allTextContents()).toEqual([expect.stringContaining('SUCCESS'), expect.stringContaining('SUCCESS')]);
    await h.screenshot(page, 'flow-executions');
  });

  it('pauses, resumes and deletes a running backfill', async () => {
    // Disabled, the trigger runs nothing: its backfill stays pending while the buttons act on it.
    await h.api('/triggers', { method: 'PUT', body: { namespace: 'ui.trig', flowId: 'waiting', triggerId: 'yearly', disabled: true } });
    const page = await h.signedInPage();
    await page.goto('/ui/flows/edit/ui.trig/waiting/triggers');
    const form = page.getByRole('form', { name: 'Backfill yearly' });
    await form.getByLabel('Backfill start').fill('2020-06-01T00:00');
    await form.getByRole('button', { name: 'Start backfill' }).click();
    const backfill = page.getByRole('group', { name: 'Backfill of yearly' });
    await backfill.getByText('running').waitFor();
    expect((await triggerState('waiting')).backfill).toMatchObject({ paused: false, end: null });
    await h.screenshot(page, 'flow-triggers-backfill-running');

    await backfill.getByRole('button', { name: 'Pause backfill of yearly' }).click();
    await backfill.getByText('paused').waitFor();
    expect((await triggerState('waiting')).backfill.paused).toBe(true);
    await backfill.getByRole('button', { name: 'Resume backfill of yearly' }).click();
    await backfill.getByText('running').waitFor();
    expect((await triggerState('waiting')).backfill.paused).toBe(false);
    await backfill.getByRole('button', { name: 'Delete backfill of yearly' }).click();
    await page.getByRole('form', { name: 'Backfill yearly' }).waitFor();
    expect((await triggerState('waiting')).backfill).toBeNull();
    expect((await h.api('/executions/flows/ui.trig/waiting')).total).toBe(0);
  });

  it('shows the server\'s message at the field for a bad backfill', async () => {
    const page = await h.signedInPage();
    await page.goto('/ui/flows/edit/ui.trig/backfilled/triggers');
    const form = page.getByRole('form', { name: 'Backfill yearly' });
    await form.getByLabel('Backfill start').fill('2023-06-01T00:00');
    await form.getByLabel('Backfill end').fill('2021-06-01T00:00');
    await form.getByRole('button', { name: 'Start backfill' }).click();
    await form.getByRole('alert').first().waitFor();
    expect((await triggerState('backfilled')).backfill).toBeNull();
  });
});
