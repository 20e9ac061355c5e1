// Live views across a dropped connection, in real headless Chromium: an execution page follows a running execution
// (its follow stream and, on the logs tab, the log follow stream); the real embedded server is stopped mid-run (its
// event streams cut) and started again on the same port and data directory; the page picks both streams up again by
// itself and ends on SUCCESS in the same document, each log line shown once. Then with a proxy in front of the server
// (test/kube/fault-proxy.ts) that ends both streams mid-run as complete answers (a proxy's timeout, or the server ending
// a follow early): the log follow ends cleanly only once the execution has ended, so such an end is followed again.
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { until } from '../support/wait.js';
import { startFaultProxy, type FaultProxy } from '../kube/fault-proxy.js';
import { PASSWORD, startUiBrowser, startUiHarness, USER, type UiBrowser, type UiHarness } from './harness.js';

const NS = 'ui.live';
const P = 'ai.service.plugin.core';
const FLOW = `id: steady\nnamespace: ${NS}\ntasks:
  - id: before
    type: ${P}.log.Log
    message: before the cut
  - id: nap
    type: ${P}.flow.Sleep
    duration: PT8S
  - id: after
    type: ${P}.log.Log
    message: after the cut
`;

let h: UiHarness;
let proxy: FaultProxy | undefined;
let viaProxy: UiBrowser | undefined;
const logLines = (page: Page) => page.getByRole('table', { name: 'Log lines' }).locator('tbody tr');
const badge = (page: Page) => page.getByRole('status', { name: 'Execution state' });
const state = async (id: string): Promise<string> => (await h.api(`/executions/${id}`)).state.current;

beforeAll(async () => {
  h = await startUiHarness();
  await h.api('/flows', { yaml: FLOW });
}, 120_000);
afterAll(async () => {
  await viaProxy?.close();
  await proxy?.close();
  await h?.close();
});

/** Opens the execution's logs tab, counting the follow streams the server answered, once the Sleep runs. */
async function followRunning(page: Page, id: string): Promise<{ execution: number; logs: number }> {
  // Streams the server answered (a request the page aborts at once, as React's effects may, has no answer).
  const opened = { execution: 0, logs: 0 };
  page.on('response', (res) => {
    const r = res.request();
    if (r.url().includes(`/api/v1/executions/${id}/follow`)) opened.execution++;
    if (r.url().includes(`/api/v1/logs/${id}/follow`)) opened.logs++;
  });
  await page.goto(`/ui/executions/${NS}/steady/${id}/logs`);
  await logLines(page).filter({ hasText: 'before the cut' }).waitFor();
  await badge(page).getByText('RUNNING').waitFor();
  await until(async () => (await h.api(`/executions/${id}`)).taskRunList.some((r: { taskId: string; state: { current: string } }) =>
    r.taskId === 'nap' && r.state.current === 'RUNNING'), 'the Sleep to run');
  await page.evaluate(() => { (window as unknown as { __sameDocument: boolean }).__sameDocument = true; });
  expect(opened).toEqual({ execution: 1, logs: 1 });
  return opened;
}

/** After the cut: the page ends on SUCCESS in the same document, both streams opened again, every line once. */
async function endsWell(page: Page, id: string, opened: { execution: number; logs: number }): Promise<void> {
  const lines = logLines(page);
  await lines.filter({ hasText: 'after the cut' }).waitFor({ timeout: 90_000 });
  await badge(page).getByText('SUCCESS').waitFor({ timeout: 60_000 });
  expect(await state(id)).toBe('SUCCESS');
  // Both streams were opened again by the page itself, in the same document (no reload).
  expect(opened.execution).toBeGreaterThanOrEqual(2);
  expect(opened.logs).toBeGreaterThanOrEqual(2);
  expect(await page.evaluate(() => (window as unknown as { __sameDocument?: boolean }).__sameDocument)).toBe(true);
  // Every stored line once, in order, nothing twice (a reconnection resends every line: the page starts over).
  const stored = (await h.api(`/logs/${id}`)) as { message: string }[];
  await until(async () => (await lines.count()) === stored.length, 'the table to hold the stored lines', 15_000);
  const shown = (await lines.locator('td.log-message').allTextContents()).map((t) => t.trim());
  expect(shown).toEqual(stored.map((l) => l.message.trim()));
  expect(shown.filter((t) => t === 'before the cut')).toHaveLength(1);
  expect(shown.filter((t) => t === 'after the cut')).toHaveLength(1);
  expect(await page.getByRole('alert').count()).toBe(0);
}

describe('live views reconnect', () => {
  for (const signal of ['SIGTERM', 'SIGKILL'] as const) {
    it(`follows the execution and its logs across a server restart (${signal}): SUCCESS without a reload, no line twice`, async () => {
      const id = (await h.api(`/executions/${NS}/steady`, { method: 'POST' })).id as string;
      const page = await h.signedInPage();
      const opened = await followRunning(page, id);
      await h.restartServer(signal);
      // While the server was away the page kept the lines it had.
      expect(await logLines(page).filter({ hasText: 'before the cut' }).count()).toBe(1);
      await endsWell(page, id, opened);
      await h.screenshot(page, `execution-reconnected-${signal.toLowerCase()}`);
    }, 180_000);
  }

  it('follows both streams again when a proxy ends them mid-run as complete answers', async () => {
    proxy = await startFaultProxy(h.origin);
    viaProxy = await startUiBrowser(proxy.url);
    const id = (await h.api(`/executions/${NS}/steady`, { method: 'POST' })).id as string;
    const page = await viaProxy.pageWith({ kind: 'basic', username: USER, password: PASSWORD });
    const opened = await followRunning(page, id);
    expect(proxy.cutStreams(new RegExp(`/api/v1/(executions|logs)/${id}/follow`), 'end')).toBe(2);
    await endsWell(page, id, opened);
    await viaProxy.screenshot(page, 'execution-reconnected-proxy');
  }, 180_000);
});
