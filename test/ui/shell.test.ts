// The web UI's shell in real headless Chromium against the real embedded server (basic auth on): `/` leads to the UI,
// a 401 shows the sign-in form (no browser prompt), wrong credentials are refused, right ones show the flows, the left
// navigation works, sign-out returns to the form, unknown pages say so, and static files are served with long caching.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PASSWORD, startUiHarness, TOKEN, USER, type UiHarness } from './harness.js';

let h: UiHarness;
beforeAll(async () => {
  h = await startUiHarness();
  await h.api('/flows', { yaml: 'id: first\nnamespace: shell.team\ntasks:\n  - id: t\n    type: io.kestra.plugin.core.log.Log\n    message: hi\n' });
}, 120_000);
afterAll(async () => { await h?.close(); });

describe('web UI shell', () => {
  it('redirects / to /ui (the dashboard), which signs in with basic auth, shows the flows, and signs out', async () => {
    const { page } = await h.newPage();
    const prompts: string[] = [];
    page.on('dialog', (d) => { prompts.push(d.type()); void d.dismiss(); });
    await page.goto('/');
    await page.getByRole('heading', { name: 'Sign in to flowpilot' }).waitFor();
    expect(new URL(page.url()).pathname).toBe('/ui/dashboard');
    await h.screenshot(page, 'sign-in');

    await page.getByRole('textbox', { name: 'Username' }).fill(USER);
    await page.getByLabel('Password', { exact: true }).fill('wrong password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'The server refused these credentials.' }).waitFor();

    await page.getByRole('textbox', { name: 'Username' }).fill(USER);
    await page.getByLabel('Password', { exact: true }).fill(PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Dashboard' }).waitFor();
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Flows' }).click();
    await page.getByRole('heading', { name: 'Flows' }).waitFor();
    await page.getByRole('link', { name: 'first' }).waitFor();
    // The credential lives in this tab's sessionStorage only.
    expect(await page.evaluate(() => sessionStorage.getItem('flowpilot.credential'))).toContain(USER);
    expect(await page.evaluate(() => localStorage.length)).toBe(0);
    const nav = page.getByRole('navigation', { name: 'Main' });
    expect(await nav.getByRole('link').allTextContents()).toContain('Flows');

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to flowpilot' }).waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem('flowpilot.credential'))).toBeNull();
    expect(prompts).toEqual([]);
  });

  it('signs in with a bearer token (API_TOKENS; the cluster home\'s ServiceAccount token) and refuses an unknown one', async () => {
    const { page } = await h.newPage();
    await page.goto('/ui/flows');
    await page.getByRole('radio', { name: 'Token' }).check();
    await page.getByRole('textbox', { name: 'Token' }).fill('not-a-known-token');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'The server refused these credentials.' }).waitFor();
    await page.getByRole('textbox', { name: 'Token' }).fill(TOKEN);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('link', { name: 'first' }).waitFor();
    expect(await page.getByRole('banner').textContent()).toContain('token');
  });

  it('deep links into the UI and says when a page does not exist', async () => {
    const page = await h.signedInPage();
    await page.goto('/ui/no/such/page');
    await page.getByText('Page not found').waitFor();
    await page.getByRole('link', { name: 'Go to the flows' }).click();
    await page.getByRole('heading', { name: 'Flows' }).waitFor();
  });

  it('serves hashed assets with a long cache, index.html for any /ui path, JSON 404 for a missing asset', async () => {
    const index = await fetch(`${h.origin}/ui/flows/edit/a/b/overview`);
    expect(index.status).toBe(200);
    expect(index.headers.get('cache-control')).toBe('no-cache');
    expect(index.headers.get('content-security-policy')).toContain("script-src 'self'");
    const html = await index.text();
    const script = /src="(\/ui\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    expect(script).toBeDefined();
    const asset = await fetch(`${h.origin}${script}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(asset.headers.get('content-type')).toMatch(/^text\/javascript/);
    const missing = await fetch(`${h.origin}/ui/assets/nope.js`);
    expect(missing.status).toBe(404);
    const traversal = await fetch(`${h.origin}/ui/assets/..%2f..%2fpackage.json`);
    expect(traversal.status).toBe(404);
  });
});
