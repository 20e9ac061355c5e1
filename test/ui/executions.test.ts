// The executions pages in real headless Chromium over the real embedded server: /ui/executions lists seeded
// executions with filters in the URL and bulk-kills a selected one; an execution page follows a running execution
// live until it ends, resumes a paused one with its onResume input, follows logs live, previews and downloads an
// output file, shows metrics, edits labels and replays; an execution with 1,000 task runs renders its Gantt with only
// the rows in view in the DOM.
import { readFileSync } from 'node:fs';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../support/wait.js';
import { startUiHarness, type UiHarness } from './harness.js';

const NS = 'ui.exec';
const P = 'ai.service.plugin.core';

const FLOWS = [
  `id: quick\nnamespace: ${NS}\ntasks:\n  - id: ret\n    type: ${P}.debug.Return\n    format: done\n`,
  `id: sleepy\nnamespace: ${NS}\ntasks:\n  - id: nap\n    type: ${P}.flow.Sleep\n    duration: PT120S\n`,
  `id: wait-then-return\nnamespace: ${NS}\ntasks:\n  - id: nap\n    type: ${P}.flow.Sleep\n    duration: PT4S\n  - id: ret\n    type: ${P}.debug.Return\n    format: woke\n`,
  `id: approval\nnamespace: ${NS}\ntasks:
  - id: approve
    type: ${P}.flow.Pause
    onResume:
      - id: approver
        type: STRING
        validator: "^[a-z]+$"
      - id: urgent
        type: BOOLEAN
        defaults: false
  - id: after
    type: ${P}.debug.Return
    format: "approved by {{ outputs.approve.onResume.approver }} urgent={{ outputs.approve.onResume.urgent }}"
`,
  `id: chatty\nnamespace: ${NS}\ntasks:
  - id: first
    type: ${P}.log.Log
    message: first line
  - id: nap
    type: ${P}.flow.Sleep
    duration: PT3S
  - id: second
    type: ${P}.log.Log
    level: WARN
    message: second line
`,
  `id: files\nnamespace: ${NS}\ntasks:
  - id: write
    type: ${P}.storage.Write
    content: "name,count\\nalpha,1\\nbeta,2\\n"
    extension: .csv
  - id: measure
    type: ai.service.plugin.scripts.shell.Commands
    taskRunner:
      type: ${P}.runner.Process
    commands:
      - echo '::{"metrics":[{"name":"rows_seen","type":"counter","value":42,"tags":{"src":"ui"}}]}::'
`,
  `id: wide\nnamespace: ${NS}\ntasks:
  - id: each
    type: ${P}.flow.EachParallel
    value: [${Array.from({ length: 1000 }, (_, i) => i).join(', ')}]
    tasks:
      - id: ret
        type: ${P}.debug.Return
        format: "{{ taskrun.value }}"
`,
];

let h: UiHarness;
const state = async (id: string): Promise<string> => (await h.api(`/executions/${id}`)).state.current;
const start = async (flowId: string, labels: string[] = []): Promise<string> =>
  (await h.api(`/executions/${NS}/${flowId}${labels.length ? `?${labels.map((l) => `labels=${encodeURIComponent(l)}`).join('&')}` : ''}`, { method: 'POST' })).id;
const ended = (id: string, want = 'SUCCESS') => until(async () => (await state(id)) === want, `execution ${id} to be ${want}`);
const badge = (page: Page) => page.getByRole('status', { name: 'Execution state' });

beforeAll(async () => {
  h = await startUiHarness();
  for (const yaml of FLOWS) await h.api('/flows', { yaml });
}, 120_000);
afterAll(async () => { await h?.close(); });

describe('/ui/executions', () => {
  it('lists seeded executions with filters in the URL and bulk-kills a selected running one', async () => {
    const done = [await start('quick', ['team:red']), await start('quick', ['team:blue']), await start('quick', ['team:red'])];
    for (const id of done) await ended(id);
    const running = await start('sleepy', ['team:red']);
    await until(async () => (await state(running)) === 'RUNNING', 'the sleepy execution to run');

    const page = await h.signedInPage();
    const searches: string[] = [];
    page.on('request', (r) => { if (r.url().includes('/api/v1/executions/search')) searches.push(new URL(r.url()).search); });
    await page.goto(`/ui/executions?namespace=${NS}&size=10`);
    const rows = page.getByRole('table', { name: 'Executions' }).locator('tbody tr');
    await page.getByRole('link', { name: running }).waitFor();
    expect(await rows.count()).toBe(4);
    await page.getByText('4 total', { exact: true }).waitFor();

    // Labels filter (typed, applied): the three red ones.
    await page.getByRole('searchbox', { name: 'Labels' }).fill('team:red');
    await page.getByRole('button', { name: 'Apply filters' }).click();
    await page.getByText('3 total', { exact: true }).waitFor();
    expect(new URL(page.url()).searchParams.getAll('labels')).toEqual(['team:red']);
    // State filter: the running red one only; the server did the filtering.
    await page.getByRole('combobox', { name: 'State' }).selectOption('RUNNING');
    await page.getByText('1 total', { exact: true }).waitFor();
    expect(searches.some((q) => /state=RUNNING/.test(q) && /labels=team%3Ared/.test(q) && /namespace=ui.exec/.test(q))).toBe(true);
    // Summaries only: the list never loads the executions' task runs.
    expect(searches.every((q) => /summary=true/.test(q))).toBe(true);
    const url = new URL(page.url());
    expect([url.searchParams.get('state'), url.searchParams.get('namespace')]).toEqual(['RUNNING', NS]);
    expect(await rows.textContent()).toContain('team:red');
    await h.screenshot(page, 'executions-list');

    // A link carries the filters: opened afresh, the same single row.
    const again = await h.signedInPage();
    await again.goto(page.url().replace(h.origin, ''));
    await again.getByText('1 total', { exact: true }).waitFor();

    await page.getByRole('checkbox', { name: `Select ${running}` }).check();
    await page.getByRole('button', { name: 'Kill selected' }).click();
    const dialog = page.getByRole('dialog', { name: 'Kill 1 execution?' });
    await dialog.waitFor();
    expect(await dialog.textContent()).toContain(running);
    await dialog.getByRole('button', { name: 'Kill executions' }).click();
    await page.getByRole('status').filter({ hasText: '1 execution kill requested' }).waitFor();
    await ended(running, 'KILLED');
    // The page reads itself again while a row runs: the RUNNING filter now matches nothing.
    await page.getByText('No execution matches these filters').waitFor();
    await page.getByRole('combobox', { name: 'State' }).selectOption('KILLED');
    await rows.filter({ hasText: running }).getByText('KILLED').waitFor();
    for (const id of done) expect(await state(id)).toBe('SUCCESS');
  });
});

describe('/ui/executions/{namespace}/{flowId}/{id}', () => {
  it('follows a running execution until it ends: the state badge turns SUCCESS without a reload', async () => {
    const id = await start('wait-then-return');
    const page = await h.signedInPage();
    await page.goto(`/ui/executions/${NS}/wait-then-return/${id}`);
    await badge(page).getByText('RUNNING').waitFor();
    await page.evaluate(() => { (window as unknown as { __sameDocument: boolean }).__sameDocument = true; });
    expect(await page.getByRole('tab', { name: 'Gantt' }).getAttribute('aria-selected')).toBe('true');
    await page.getByRole('img', { name: /^nap attempt 1: RUNNING/ }).waitFor();
    await h.screenshot(page, 'execution-running');
    await badge(page).getByText('SUCCESS').waitFor({ timeout: 30_000 });
    await page.getByRole('img', { name: /^ret attempt 1: SUCCESS/ }).waitFor();
    // The same document all along: the change came through the follow stream, not a reload.
    expect(await page.evaluate(() => (window as unknown as { __sameDocument?: boolean }).__sameDocument)).toBe(true);
    expect(await state(id)).toBe('SUCCESS');
    expect(await page.getByRole('button', { name: 'Kill' }).isDisabled()).toBe(true);
    await h.screenshot(page, 'execution-gantt');
  });

  it('resumes a paused execution with its onResume input', async () => {
    const id = await start('approval');
    await until(async () => (await state(id)) === 'PAUSED', 'the execution to pause');
    const page = await h.signedInPage();
    await page.goto(`/ui/executions/${NS}/approval/${id}`);
    await badge(page).getByText('PAUSED').waitFor();
    await page.getByRole('button', { name: 'Resume' }).click();
    const dialog = page.getByRole('dialog', { name: 'Resume this execution' });
    // The server checks the value (422 naming inputs.approver): its message is shown at the field, nothing resumed.
    await dialog.getByLabel('approver').fill('Alice 1');
    await dialog.getByRole('button', { name: 'Resume execution' }).click();
    const fieldError = dialog.locator('#input-approver-error');
    await fieldError.getByText(/does not match the validator/).waitFor();
    expect(await dialog.getByLabel('approver').getAttribute('aria-invalid')).toBe('true');
    expect(await state(id)).toBe('PAUSED');
    await dialog.getByLabel('approver').fill('alice');
    expect(await dialog.getByRole('switch', { name: /urgent/ }).isChecked()).toBe(false);
    await dialog.getByRole('switch', { name: /urgent/ }).check();
    await h.screenshot(page, 'execution-resume');
    await dialog.getByRole('button', { name: 'Resume execution' }).click();
    await badge(page).getByText('SUCCESS').waitFor({ timeout: 30_000 });
    const execution = await h.api(`/executions/${id}`);
    const after = execution.taskRunList.find((r: { taskId: string }) => r.taskId === 'after');
    expect(after.outputs.value).toBe('approved by alice urgent=true');
  });

  it('follows the logs live, filters them by level and task, and downloads them', async () => {
    const id = await start('chatty');
    const page = await h.signedInPage();
    const follows: string[] = [];
    page.on('request', (r) => { if (r.url().includes(`/api/v1/logs/${id}/follow`)) follows.push(r.url()); });
    await page.goto(`/ui/executions/${NS}/chatty/${id}/logs`);
    const lines = page.getByRole('table', { name: 'Log lines' }).locator('tbody tr');
    await lines.filter({ hasText: 'first line' }).waitFor();
    expect(await page.getByRole('checkbox', { name: 'Follow live' }).isChecked()).toBe(true);
    expect(await lines.filter({ hasText: 'second line' }).count()).toBe(0);
    // The second line arrives through the open stream, after the Sleep.
    await lines.filter({ hasText: 'second line' }).waitFor({ timeout: 30_000 });
    await badge(page).getByText('SUCCESS').waitFor();
    expect(follows.length).toBeGreaterThanOrEqual(1);
    expect(await lines.filter({ hasText: 'second line' }).textContent()).toContain('WARN');
    await h.screenshot(page, 'execution-logs');

    // Paged from the server once not following: level and task filters in the URL.
    await page.getByRole('checkbox', { name: 'Follow live' }).uncheck();
    await page.getByRole('combobox', { name: 'Minimum level' }).selectOption('WARN');
    await page.getByText('1 total', { exact: true }).waitFor();
    expect(await lines.allTextContents()).toEqual([expect.stringContaining('second line')]);
    expect(new URL(page.url()).searchParams.get('level')).toBe('WARN');
    await page.getByRole('combobox', { name: 'Minimum level' }).selectOption('');
    await page.getByRole('combobox', { name: 'Task' }).selectOption('first');
    await page.getByText('1 total', { exact: true }).waitFor();
    expect(await lines.allTextContents()).toEqual([expect.stringContaining('first line')]);

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Download logs' }).click()]);
    expect(download.suggestedFilename()).toBe(`${id}.log`);
    const text = readFileSync((await download.path())!, 'utf8');
    expect(text).toContain('first line');
    expect(text).not.toContain('second line'); // the task filter applies to the download too
  });

  it('previews and downloads an output file, and shows the metrics', async () => {
    const id = await start('files');
    await ended(id);
    const page = await h.signedInPage();
    await page.goto(`/ui/executions/${NS}/files/${id}/outputs`);
    const preview = page.getByRole('button', { name: /^Preview .*\.csv$/ });
    await preview.click();
    const rows = page.getByRole('table', { name: 'File rows' });
    await rows.waitFor();
    expect(await rows.locator('thead th').allTextContents()).toEqual(['name', 'count']);
    expect(await rows.locator('tbody tr').allTextContents()).toEqual(['alpha1', 'beta2']);
    await page.getByText('(26 bytes)').waitFor();
    await h.screenshot(page, 'execution-outputs');
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: /^Download .*\.csv$/ }).click()]);
    expect(readFileSync((await download.path())!, 'utf8')).toBe('name,count\nalpha,1\nbeta,2\n');

    await page.getByRole('tab', { name: 'Metrics' }).click();
    const metric = page.getByRole('table', { name: 'Metrics' }).locator('tbody tr');
    await metric.first().waitFor();
    expect(await metric.count()).toBe(1);
    expect(await metric.textContent()).toMatch(/measure.*rows_seen.*counter.*42.*src:ui/);
  });

  it('edits the labels of an ended execution and replays it from a chosen task run', async () => {
    const id = await start('files', ['team:red']);
    await ended(id);
    const page = await h.signedInPage();
    await page.goto(`/ui/executions/${NS}/files/${id}`);
    await badge(page).getByText('SUCCESS').waitFor();
    await page.getByRole('button', { name: 'Edit labels' }).click();
    const labels = page.getByRole('dialog', { name: 'Edit labels' });
    await labels.getByRole('button', { name: 'Add label' }).click();
    await labels.getByLabel('Label 2 key').fill('reviewed');
    await labels.getByLabel('Label 2 value').fill('yes');
    await labels.getByRole('button', { name: 'Save labels' }).click();
    await page.getByLabel('Labels', { exact: true }).getByText('reviewed:yes').waitFor();
    expect((await h.api(`/executions/${id}`)).labels).toEqual(expect.arrayContaining([{ key: 'team', value: 'red' }, { key: 'reviewed', value: 'yes' }]));

    const measure = (await h.api(`/executions/${id}`)).taskRunList.find((r: { taskId: string }) => r.taskId === 'measure');
    await page.getByRole('button', { name: 'Replay' }).click();
    const replay = page.getByRole('dialog', { name: 'Replay this execution' });
    await replay.getByLabel('From task run').selectOption(measure.id);
    await replay.getByRole('button', { name: 'Replay execution' }).click();
    await page.waitForURL((u) => !u.pathname.endsWith(id) && u.pathname.startsWith(`/ui/executions/${NS}/files/`));
    const newId = page.url().split('/').pop()!;
    await badge(page).getByText('SUCCESS').waitFor({ timeout: 30_000 });
    const copy = await h.api(`/executions/${newId}`);
    expect(copy.originalId).toBe(id);
    // The write before the chosen task run is kept as it ended (same output file), not run again.
    const write = (e: { taskRunList: { taskId: string; outputs?: { uri?: string } }[] }) => e.taskRunList.find((r) => r.taskId === 'write')!.outputs!.uri;
    expect(write(copy)).toBe(write(await h.api(`/executions/${id}`)));
  });

  it('renders the Gantt of an execution with 1,000 task runs with only the rows in view in the DOM', async () => {
    const id = await start('wide');
    await ended(id);
    expect((await h.api(`/executions/${id}`)).taskRunList).toHaveLength(1001);
    const page = await h.signedInPage();
    await page.goto(`/ui/executions/${NS}/wide/${id}`);
    const gantt = page.getByRole('table', { name: 'Gantt' });
    await gantt.getByRole('rowheader').first().waitFor();
    expect(await gantt.getAttribute('data-total-rows')).toBe('1001');
    const drawn = await gantt.getByRole('rowheader').count();
    expect(drawn).toBeGreaterThan(10);
    expect(drawn).toBeLessThan(60);
    expect(await page.locator('*').count()).toBeLessThan(2000);
    // Children nested under their parent, in value order.
    expect(await gantt.getByRole('rowheader').nth(0).textContent()).toContain('each');
    expect(await gantt.getByRole('rowheader').nth(1).textContent()).toContain('ret [0]');
    await h.screenshot(page, 'execution-gantt-1000');
    // Scrolled to the end: the last task run is drawn, still without the others.
    await page.locator('.gantt-viewport').evaluate((el) => { el.scrollTop = el.scrollHeight; });
    await gantt.getByRole('button', { name: 'ret [999]' }).waitFor();
    expect(await gantt.getByRole('rowheader').count()).toBeLessThan(60);
    // Collapsing the parent hides its 1,000 children.
    await page.locator('.gantt-viewport').evaluate((el) => { el.scrollTop = 0; });
    await gantt.getByRole('button', { name: 'Collapse each' }).click();
    await until(async () => (await gantt.getAttribute('data-total-rows')) === '1', 'the children to fold');
    expect(await gantt.getByRole('rowheader').count()).toBe(1);
  });
});
