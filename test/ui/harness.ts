// Browser-test harness of the web UI: builds the UI when ui/dist is missing or older than ui/src, starts the real
// embedded server as a process (operator/main.ts, with basic auth and a bearer token on), seeds data through the real API, and drives
// Debian's headless Chromium (/usr/bin/chromium) through playwright-core. One browser per test file; screenshots go
// to test/ui/screenshots/ (git-ignored) for a reviewer to look at. `startUiBrowser` alone drives the UI of any server
// (the cluster home's API in test/ui/cluster.test.ts); `restartServer` restarts the embedded one on its port and data.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';

const ROOT = resolve(new URL('../..', import.meta.url).pathname);
export const SCREENSHOTS = join(ROOT, 'test/ui/screenshots');
export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
export const USER = 'ui-admin';
export const PASSWORD = 'ui: correct horse';
export const TOKEN = 'ui-token-5d1f0c2b7a';

const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
  '--disable-component-update', '--disable-sync'];

const newestMtime = (dir: string): number => readdirSync(dir, { recursive: true, withFileTypes: true })
  .filter((d) => d.isFile()).reduce((m, d) => Math.max(m, statSync(join(d.parentPath, d.name)).mtimeMs), 0);

/** Builds ui/dist unless it is newer than every source file of the UI. */
export async function ensureUiBuilt(): Promise<void> {
  const index = join(ROOT, 'ui/dist/index.html');
  const sources = Math.max(newestMtime(join(ROOT, 'ui/src')), statSync(join(ROOT, 'ui/index.html')).mtimeMs, statSync(join(ROOT, 'ui/vite.config.ts')).mtimeMs);
  if (existsSync(index) && statSync(index).mtimeMs >= sources) return;
  const { buildUi } = await import('../../scripts/build-ui.mjs');
  await buildUi();
}

/** Headless Chromium on the UI served at `origin`: fresh contexts, pages signed in with a credential, screenshots. */
export interface UiBrowser {
  browser: Browser;
  /** A fresh browser context (empty sessionStorage) and page at 1280×800. */
  newPage(): Promise<{ context: BrowserContext; page: Page }>;
  /** A page already signed in with `credential` (placed in sessionStorage as the sign-in form does). */
  pageWith(credential: { kind: 'basic'; username: string; password: string } | { kind: 'bearer'; token: string }): Promise<Page>;
  screenshot(page: Page, name: string): Promise<void>;
  close(): Promise<void>;
}

export async function startUiBrowser(origin: string): Promise<UiBrowser> {
  await ensureUiBuilt();
  const browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS, headless: true });
  mkdirSync(SCREENSHOTS, { recursive: true });
  const contexts: BrowserContext[] = [];
  const b: UiBrowser = {
    browser,
    async newPage() {
      const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, baseURL: origin });
      contexts.push(context);
      return { context, page: await context.newPage() };
    },
    async pageWith(credential) {
      const { context, page } = await b.newPage();
      await context.addInitScript((c) => { sessionStorage.setItem('flowpilot.credential', c); }, JSON.stringify(credential));
      return page;
    },
    async screenshot(page, name) {
      await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: true });
    },
    async close() {
      for (const c of contexts) await c.close().catch(() => undefined);
      await browser.close();
    },
  };
  return b;
}

export interface UiHarness {
  /** The running server process (a new one after `restartServer`). */
  server: ServerProcess;
  /** The server's origin, e.g. http://127.0.0.1:40123 */
  origin: string;
  browser: Browser;
  /** A JSON call to /api/v1 with the admin's credentials; throws on a non-2xx answer. */
  api(path: string, init?: { method?: string; body?: unknown; yaml?: string }): Promise<any>;
  /** A fresh browser context (empty sessionStorage) and page at 1280×800. */
  newPage(): Promise<{ context: BrowserContext; page: Page }>;
  /** A page already signed in (the credential placed in sessionStorage as the sign-in form does). */
  signedInPage(): Promise<Page>;
  screenshot(page: Page, name: string): Promise<void>;
  /**
   * Stops the server (SIGTERM: its open connections, event streams included, are cut; SIGKILL: as a crash) and starts
   * it again on the same port and data directory; resolves once it listens again.
   */
  restartServer(signal?: 'SIGTERM' | 'SIGKILL'): Promise<void>;
  close(): Promise<void>;
}

const authHeader = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;

/** `env`: more settings of the server (e.g. `TRIGGERS: 'true'` to run the scheduler; off by default). */
export async function startUiHarness(opts: { env?: Record<string, string> } = {}): Promise<UiHarness> {
  await ensureUiBuilt();
  const dataDir = mkdtempSync(join(tmpdir(), 'ui-test-'));
  const env = { BASIC_AUTH_USERNAME: USER, BASIC_AUTH_PASSWORD: PASSWORD, API_TOKENS: TOKEN, TRIGGERS: 'false', ...opts.env };
  const server = await startServerProcess(dataDir, 'pipe', env);
  const origin = `http://127.0.0.1:${server.port}`;
  const ui = await startUiBrowser(origin);
  const stopServer = async (signal: 'SIGTERM' | 'SIGKILL') => {
    const { proc } = h.server;
    const exited = new Promise((r) => (proc.exitCode !== null || proc.signalCode !== null ? r(undefined) : proc.once('exit', r)));
    proc.kill(signal);
    await exited;
  };
  const h: UiHarness = {
    server, origin, browser: ui.browser, newPage: ui.newPage, screenshot: ui.screenshot,
    async api(path, init = {}) {
      const headers: Record<string, string> = { Authorization: authHeader };
      let body: string | undefined;
      if (init.yaml !== undefined) { headers['Content-Type'] = 'application/x-yaml'; body = init.yaml; }
      else if (init.body !== undefined) { headers['Content-Type'] = 'application/json'; body = JSON.stringify(init.body); }
      const res = await fetch(`${origin}/api/v1${path}`, { method: init.method ?? (body ? 'POST' : 'GET'), headers, body });
      const text = await res.text();
      if (!res.ok) throw new Error(`${init.method ?? 'GET'} ${path}: ${res.status} ${text}`);
      return text ? JSON.parse(text) : undefined;
    },
    signedInPage: () => ui.pageWith({ kind: 'basic', username: USER, password: PASSWORD }),
    async restartServer(signal = 'SIGTERM') {
      await stopServer(signal);
      h.server = await startServerProcess(dataDir, 'pipe', { ...env, PORT: String(server.port) });
    },
    async close() {
      await ui.close();
      await stopServer('SIGTERM');
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
  return h;
}
