// The dashboard and the log search in real headless Chromium over the real embedded server: /ui leads to the
// dashboard, whose counts by state (from POST /stats/executions/daily: no execution document loaded for them) match
// the executions seeded through the API, today's bar of the SVG chart says the same, and the latest failed executions
// are listed; /ui/logs finds a line by full-text search, filters by level and links to the execution; the flow's Logs
// tab shows that flow's lines only.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../support/wait.js';
import { startUiHarness, type UiHarness } from './harness.js';

const LOG = 'io.kestra.plugin.core.log.Log';
const FAIL = 'io.kestra.plugin.core.execution.Fail';
const OK = `id: ok\nnamespace: ui.dash\ntasks:\n  - id: say\n    type: ${LOG}\n    message: "zebracorn {{ execution.id }}"\n`;
const BAD = `id: bad\nnamespace: ui.dash\ntasks:\n  - id: boom\n    type: ${FAIL}\n    errorMessage: "unicorn exploded"\n`;

let h: UiHarness;
const ok: string[] = [];
const bad: string[] = [];
beforeAll(async () => {
  h = await startUiHarness();
  await h.api('/flows', { yaml: OK });
  await h.api('/flows', { yaml: BAD });
  for (let i = 0; i < 3; i++) ok.push((await h.api('/executions/ui.dash/ok', { body: {} })).id);
  for (let i = 0; i < 2; i++) bad.push((await h.api('/executions/ui.dash/bad', { body: {} })).id);
  const ended = async (id: string) => ['SUCCESS', 'FAILED'].includes((await h.api(`/executions/${id}`)).state.current);
  for (const id of [...ok, ...bad]) await until(() => ended(id), `execution ${id} to end`);
  // Log lines are written in batches after the task ends: the log search page asks once, so wait for them to be there.
  await until(async () => (await h.api('/logs/search?q=zebracorn')).total === 3, 'the three log lines to be searchable');
}, 120_000);
afterAll(async () => { await h?.close(); });

describe('/ui/dashboard', () => {
  it('is the home page and shows counts by state matching the executions, failures first, without loading them', async () => {
    const page = await h.signedInPage();
    const apiCalls: string[] = [];
    page.on('request', (r) => { const u = new URL(r.url()); if (u.pathname.startsWith('/api/v1/')) apiCalls.push(`${r.method()} ${u.pathname}${u.search}`); });
    await page.goto('/ui');
    await page.waitForURL('**/ui/dashboard');
    const totals = page.getByRole('table', { name: 'Executions by state' }).locator('tbody tr');
    await totals.first().waitFor();
    expect(await totals.allTextContents()).toEqual([
      expect.stringMatching(/^FAILED\s*2\s*40 %$/),
      expect.stringMatching(/^SUCCESS\s*3\s*60 %$/),
    ]);
    // Today's bar carries the same counts (failures first).
    const chart = page.getByRole('img', { name: 'Executions per day by state, last 30 days' });
    const today = new Date().toISOString().slice(0, 10);
    expect(await chart.locator(`g[data-day="${today}"] title`).textContent()).toBe(`${today}: FAILED 2, SUCCESS 3`);
    expect(await chart.locator(`g[data-day="${today}"] rect`).count()).toBe(2);
    expect(await chart.locator('g[data-day]').count()).toBe(30);

    const failed = page.getByRole('table', { name: 'Latest failed executions' }).locator('tbody tr');
    await until(async () => (await failed.count()) === 2, 'the two failed executions listed');
    const text = (await failed.allTextContents()).join(' ');
    for (const id of bad) expect(text).toContain(id);
    for (const id of ok) expect(text).not.toContain(id);
    await h.screenshot(page, 'dashboard');

    // The counts came from the statistics route; the only executions read are the listed failed ones (one page).
    expect(apiCalls.filter((c) => c.startsWith('POST /api/v1/stats/executions/daily')).length).toBeGreaterThan(0);
    expect(apiCalls.filter((c) => /^GET \/api\/v1\/executions\/(?!search$)[^/]+$/.test(c.split('?')[0]!))).toEqual([]);
    expect(apiCalls.filter((c) => c.includes('/executions/search')).every((c) => /state=FAILED/.test(c) && /size=10/.test(c))).toBe(true);

    // Another range asks the server again.
    await page.getByRole('combobox', { name: 'Range' }).selectOption('7');
    await page.getByRole('img', { name: 'Executions per day by state, last 7 days' }).waitFor();
    expect(await page.locator('g[data-day]').count()).toBe(7);
  });
});

describe('/ui/logs', () => {
  it('finds a line by full-text search, filters by level and links to the execution', async () => {
    const page = await h.signedInPage();
    await page.goto('/ui/logs');
    await page.getByRole('searchbox', { name: 'Search logs' }).fill('zebracorn');
    await page.getByRole('button', { name: 'Search' }).click();
    const rows = page.getByRole('table', { name: 'Log lines' }).locator('tbody tr');
    await page.getByText('3 total', { exact: true }).waitFor();
    expect(await rows.count()).toBe(3);
    const first = (await rows.first().textContent()) ?? '';
    expect(ok.some((id) => first.includes(`zebracorn ${id}`))).toBe(true);
    expect(new URL(page.url()).searchParams.get('q')).toBe('zebracorn');
    await h.screenshot(page, 'logs-search');

    // The failed executions' error lines, by level.
    await page.getByRole('searchbox', { name: 'Search logs' }).fill('');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByRole('combobox', { name: 'Level' }).selectOption('ERROR');
    // One read of the rows both waits and is asserted on: the table may re-render (an empty tbody) between two reads.
    let errors = '';
    await until(async () => {
      const texts = await rows.allTextContents();
      errors = texts.join(' ');
      return texts.length > 0 && texts.every((t) => t.includes('ERROR')) && errors.includes('unicorn exploded');
    }, 'error lines only, the failed executions\' among them');
    expect(errors).toContain('unicorn exploded');
    expect(errors).not.toContain('zebracorn');

    const link = rows.first().getByRole('link', { name: /^[A-Za-z0-9]{10,}$/ });
    const href = await link.getAttribute('href');
    expect(bad.some((id) => href === `/ui/executions/ui.dash/bad/${id}`)).toBe(true);
  });

  it("the flow's Logs tab shows that flow's lines only", async () => {
    const page = await h.signedInPage();
    await page.goto('/ui/flows/edit/ui.dash/ok/logs');
    const rows = page.getByRole('table', { name: 'Log lines' }).locator('tbody tr');
    await rows.first().waitFor();
    const all = await rows.allTextContents();
    expect(all.some((t) => t.includes('zebracorn'))).toBe(true);
    expect(all.some((t) => t.includes('unicorn exploded'))).toBe(false);
  });
});
