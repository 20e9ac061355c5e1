// Test harness for the API: real embedded stores in a temp dir, the real Koa app on port 0, and fetch helpers.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type Koa from 'koa';
import { createApp } from '../../api/app.js';
import { startServer } from '../../api/server.js';
import type { ApiOptions } from '../../api/deps.js';
import { embeddedSecrets, maskedStores } from '../../operator/secrets/index.js';
import { openEmbeddedStores, type EmbeddedStores } from '../../operator/store/sqlite/index.js';

export interface TestApi {
  url: string;
  stores: EmbeddedStores;
  dataDir: string;
  close(): Promise<void>;
}

/**
 * The stores are composed as embedded main does: behind the secret layer of `env` (default: no secrets). `before`:
 * middleware ahead of the routes, as createApp takes it (authentication).
 */
export async function startTestApi(opts: Omit<ApiOptions, 'stores'> & {
  env?: NodeJS.ProcessEnv;
  /** Options built from the stores (a renderer reading KV). */
  withStores?: (stores: EmbeddedStores) => Omit<ApiOptions, 'stores'>;
  before?: Koa.Middleware[];
} = {}): Promise<TestApi> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'api-test-'));
  const { env = {}, withStores, before, ...apiOpts } = opts;
  const stores = maskedStores(openEmbeddedStores(dataDir), embeddedSecrets(env, dataDir));
  const server = await startServer(createApp({ stores, ...apiOpts, ...withStores?.(stores) }, { before }), 0, '127.0.0.1');
  return {
    url: `http://127.0.0.1:${server.port}`,
    stores,
    dataDir,
    async close() {
      await server.close();
      await stores.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

export interface JsonResponse<T = any> { status: number; body: T; headers: Headers }

/** fetch with a JSON (or empty) response body parsed. */
export async function call<T = any>(url: string, init: RequestInit = {}): Promise<JsonResponse<T>> {
  const res = await fetch(url, init);
  const text = await res.text();
  let body: unknown = text;
  if (text !== '' && (res.headers.get('content-type') ?? '').includes('json')) body = JSON.parse(text);
  return { status: res.status, body: body as T, headers: res.headers };
}

export const yamlInit = (method: string, yaml: string): RequestInit =>
  ({ method, headers: { 'Content-Type': 'application/x-yaml' }, body: yaml });

export const jsonInit = (method: string, value: unknown): RequestInit =>
  ({ method, headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(value) });

export async function createFlow(api: TestApi, yaml: string): Promise<any> {
  const res = await call(`${api.url}/api/v1/flows`, yamlInit('POST', yaml));
  if (res.status !== 200) throw new Error(`flow creation failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

export const LOG_TYPE = 'ai.service.plugin.core.log.Log';

export function simpleFlow(namespace: string, id: string, extra = ''): string {
  return `id: ${id}
namespace: ${namespace}
${extra}
tasks:
  - id: hello
    type: ${LOG_TYPE}
    message: "Hello {{ inputs.name ?? 'world' }}"
`;
}
