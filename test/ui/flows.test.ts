// The flows pages in real headless Chromium over the real embedded server: /ui/flows searches and filters on the
// server, pages with the server's total, and shows each flow's last execution state; a flow's Overview renders its
// Markdown description safely (raw HTML shown as text, no script runs), its inputs, triggers and recent executions.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../support/wait.js';
import { startUiHarness, type UiHarness } from './harness.js';

const LOG = 'io.kestra.plugin.core.log.Log';
const simple = (ns: string, id: string) => `id: ${id}\nnamespace: ${ns}\ntasks:\n  - id: t\n    type: ${LOG}\n    message: hi\n`;

const DESCRIBED = `id: described
namespace: ui.beta
description: |
  # Nightly load

  Loads **orders** into the warehouse. See [the runbook](https://example.com/runbook).

  <img src="x" onerror="window.__pwned = 1">
  <script>window.__pwned = 2</script>

  [click me](javascript:window.__pwned=3)
labels:
  team: data
inputs:
  - id: day
    type: STRING
    defaults: "2024-01-01"
    description: Which day to load
  - id: dry
    type: BOOLEAN
    required: false
triggers:
  - id: nightly
    type: io.kestra.plugin.core.trigger.Schedule
    cron: "0 2 * * *"
tasks:
  - id: t
    type: ${LOG}
    message: "loading {{ inputs.day }}"
`;

let h: UiHarness;
let executionId: string;
beforeAll(async () => {
  h = await startUiHarness();
  for (let i = 1; i <= 12; i++) await h.api('/flows', { yaml: simple('ui.alpha', `alpha-${String(i).padStart(2, '0')}`) });
  await h.api('/flows', { yaml: DESCRIBED });
  const created = await h.api('/executions/ui.beta/described', { body: { day: '2024-02-03' } });
  executionId = created.id;
  await until(async () => (await h.api(`/executions/${executionId}`)).state.current === 'SUCCESS', `execution ${executionId} to succeed`);
}, 120_000);
afterAll(async () => { await h?.close(); });

const bodyRows = (page: import('playwright-core').Page, table: string) =>
  page.getByRole('table', { name: table }).locator('tbody tr');

describe('/ui/flows', () => {
  it('pages on the server, filters by namespace, searches, and shows the last execution state', async () => {
    const page = await h.signedInPage();
    const calls: string[] = [];
    page.on('request', (r) => { if (r.url().includes('/api/v1/flows/search')) calls.push(new URL(r.url()).search); });
    await page.goto('/ui/flows?size=10');
    await page.getByRole('link', { name: 'alpha-01' }).waitFor();
    expect(await bodyRows(page, 'Flows').count()).toBe(10);
    await page.getByText('13 total', { exact: true }).waitFor();
    await page.getByText('Page 1 of 2').waitFor();
    await page.getByRole('button', { name: 'Next page' }).click();
    await page.getByText('Page 2 of 2').waitFor();
    await page.getByRole('link', { name: 'described' }).waitFor();
    expect(await bodyRows(page, 'Flows').count()).toBe(3);
    // The server did the paging: the second page was asked for, not sliced from one big answer.
    expect(calls.some((q) => /page=2/.test(q) && /size=10/.test(q))).toBe(true);
    expect(new URL(page.url()).searchParams.get('page')).toBe('2');

    // The last execution of `described`, with its state.
    const row = bodyRows(page, 'Flows').filter({ has: page.getByRole('link', { name: 'described' }) });
    await row.getByText('SUCCESS').waitFor();
    expect(await row.textContent()).toContain('team:data');
    await h.screenshot(page, 'flows-list');

    await page.getByRole('combobox', { name: 'Namespace' }).selectOption('ui.beta');
    await page.getByText('1 total', { exact: true }).waitFor();
    expect(await bodyRows(page, 'Flows').count()).toBe(1);
    expect(new URL(page.url()).searchParams.get('namespace')).toBe('ui.beta');

    await page.getByRole('combobox', { name: 'Namespace' }).selectOption('');
    await page.getByRole('searchbox', { name: 'Search flows' }).fill('alpha-1');
    await page.getByText('3 total', { exact: true }).waitFor(); // alpha-10, alpha-11, alpha-12
    expect(await bodyRows(page, 'Flows').allTextContents()).toEqual(expect.arrayContaining([expect.stringContaining('alpha-10')]));
    expect(new URL(page.url()).searchParams.get('q')).toBe('alpha-1');

    await page.getByRole('searchbox', { name: 'Search flows' }).fill('no-such-flow');
    await page.getByText('No flow matches these filters').waitFor();
  });
});

describe('/ui/flows/edit/{namespace}/{id}/overview', () => {
  it('renders the description safely, the inputs, the triggers and the recent executions', async () => {
    const page = await h.signedInPage();
    const dialogs: string[] = [];
    page.on('dialog', (d) => { dialogs.push(d.message()); void d.dismiss(); });
    await page.goto('/ui/flows');
    await page.getByRole('link', { name: 'described' }).click();
    await page.waitForURL('**/ui/flows/edit/ui.beta/described/overview');
    await page.getByRole('heading', { name: 'Nightly load' }).waitFor();
    expect(await page.getByRole('tab', { name: 'Overview' }).getAttribute('aria-selected')).toBe('true');

    const description = page.locator('.markdown');
    expect(await description.locator('strong').textContent()).toBe('orders');
    const runbook = description.getByRole('link', { name: 'the runbook' });
    expect(await runbook.getAttribute('href')).toBe('https://example.com/runbook');
    expect(await runbook.getAttribute('rel')).toBe('noopener noreferrer');
    // Raw HTML is shown as text, never made into elements; the javascript: link is not a link.
    expect(await description.locator('img, script').count()).toBe(0);
    expect(await description.textContent()).toContain('<img src="x" onerror="window.__pwned = 1">');
    expect(await description.getByRole('link', { name: 'click me' }).count()).toBe(0);
    expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();

    const inputs = bodyRows(page, 'Inputs');
    expect(await inputs.count()).toBe(2);
    expect(await inputs.nth(0).textContent()).toMatch(/day.*STRING.*yes.*2024-01-01.*Which day to load/);
    expect(await inputs.nth(1).textContent()).toMatch(/dry.*BOOLEAN.*no/);

    const triggers = bodyRows(page, 'Triggers');
    expect(await triggers.count()).toBe(1);
    expect(await triggers.textContent()).toMatch(/nightly.*Schedule.*cron 0 2 \* \* \*.*yes/);

    const recent = bodyRows(page, 'Recent executions');
    await recent.first().waitFor();
    expect(await recent.count()).toBe(1);
    expect(await recent.textContent()).toContain(executionId);
    expect(await recent.textContent()).toContain('SUCCESS');
    expect(await recent.getByRole('link').getAttribute('href')).toBe(`/ui/executions/ui.beta/described/${executionId}`);
    expect(dialogs).toEqual([]);
    await h.screenshot(page, 'flow-overview');
  });

  it('says so for a flow that does not exist and for a tab that does not', async () => {
    const page = await h.signedInPage();
    await page.goto('/ui/flows/edit/ui.beta/missing/overview');
    await page.getByRole('alert').filter({ hasText: "Flow 'ui.beta.missing' not found" }).waitFor();
    await page.goto('/ui/flows/edit/ui.beta/described/nope');
    await page.getByText("This flow has no tab 'nope'").waitFor();
    // The default tab is the overview.
    await page.goto('/ui/flows/edit/ui.beta/described');
    await page.getByRole('heading', { name: 'Inputs' }).waitFor();
  });
});
