// Model-server errors the job tests do not reach through the service: a request that times out and a server that
// refuses connections after the job's check are retried per item with the backoff, then reported with the cause and
// the attempts; Retry-After as seconds or an HTTP date; the check before a job names a refused API key or a failing
// server. Also: GGUF paths are checked at start. Real HTTP against the scripted OpenAI-compatible server (model-server.ts).
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpenAICompatibleBackend, retryAfterMs } from '../../operator/inference/backends/openai.js';
import { BackendRegistry } from '../../operator/inference/backends/registry.js';
import { loadInferenceConfig } from '../../operator/inference/config.js';
import { startInferenceService } from '../../operator/inference/index.js';
import { closedPort, startModelServer, type ModelServer } from './model-server.js';

let model: ModelServer;
beforeAll(async () => { model = await startModelServer(); });
afterAll(async () => { await model?.close(); });

const backend = (baseUrl: string, over: Partial<ConstructorParameters<typeof OpenAICompatibleBackend>[0]> = {}) =>
  new OpenAICompatibleBackend({ baseUrl, model: 'served', concurrency: 1, retries: 2, baseDelayMs: 20, maxDelayMs: 50, ...over });

describe('OpenAI-compatible backend, per item', () => {
  it('retries a request that timed out, then answers', async () => {
    const before = model.requests.length;
    model.reply = (n) => (n === before ? { kind: 'hold' } : { kind: 'ok', text: 'after a timeout' });
    const r = await backend(model.url, { timeoutMs: 300 }).complete({ prompt: 'p', maxTokens: 4 });
    expect(r.text).toBe('after a timeout');
    expect(model.requests.length - before).toBe(2);
  });

  it('gives up on a lasting timeout naming it and the attempts', async () => {
    model.reply = () => ({ kind: 'hold' });
    await expect(backend(model.url, { timeoutMs: 200, retries: 1 }).complete({ prompt: 'p', maxTokens: 4 }))
      .rejects.toThrow(/could not be reached \(timed out\) \(after 2 attempts\)/);
  });

  it('takes its time limit from INFERENCE_REQUEST_TIMEOUT_SECONDS, and refuses a value that is not a whole number of seconds naming it', async () => {
    model.reply = () => ({ kind: 'hold' });
    const config = loadInferenceConfig({ INFERENCE_MODEL_SERVED: `openai:${model.url}`, INFERENCE_REQUEST_TIMEOUT_SECONDS: '1', INFERENCE_SERVER_RETRIES: '0' });
    expect(config.requestTimeoutSeconds).toBe(1);
    expect(loadInferenceConfig({}).requestTimeoutSeconds).toBe(600);
    const started = Date.now();
    await expect((await new BackendRegistry(config, tmpdir()).get('served')).complete({ prompt: 'p', maxTokens: 4 }))
      .rejects.toThrow(/could not be reached \(timed out\) \(after 1 attempt/);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    for (const bad of ['0', '1.5', 'soon']) {
      expect(() => loadInferenceConfig({ INFERENCE_REQUEST_TIMEOUT_SECONDS: bad })).toThrow(/INFERENCE_REQUEST_TIMEOUT_SECONDS must be an integer >= 1/);
    }
  });

  it('retries a refused connection (the server went down after the check) with backoff, then names the cause', async () => {
    const port = await closedPort();
    const started = Date.now();
    await expect(backend(`http://127.0.0.1:${port}/v1`, { baseDelayMs: 100, maxDelayMs: 100 }).complete({ prompt: 'p', maxTokens: 4 }))
      .rejects.toThrow(`model server http://127.0.0.1:${port}/v1 could not be reached (ECONNREFUSED) (after 3 attempts)`);
    expect(Date.now() - started).toBeGreaterThanOrEqual(100); // two waits of the capped, jittered backoff (at least half of 100 ms each)
  });

  it.each([
    [401, 'refused the API key (HTTP 401)'], [403, 'refused the API key (HTTP 403)'], [503, 'is failing (GET /models answered HTTP 503)'],
  ])('fails the check before any generation when GET /models answers %i, naming the URL', async (status, why) => {
    const srv = createServer((_req, res) => { res.statusCode = status; res.end('{}'); });
    await new Promise<void>((ok) => srv.listen(0, '127.0.0.1', ok));
    const url = `http://127.0.0.1:${(srv.address() as AddressInfo).port}/v1`;
    try {
      await expect(backend(url, { apiKey: 'wrong' }).check()).rejects.toThrow(`model server ${url} ${why}`);
    } finally { await new Promise((ok) => srv.close(ok)); }
  });

  it('passes the check of a server up without GET /models (404)', async () => {
    const srv = createServer((_req, res) => { res.statusCode = 404; res.end(); });
    await new Promise<void>((ok) => srv.listen(0, '127.0.0.1', ok));
    try {
      await expect(backend(`http://127.0.0.1:${(srv.address() as AddressInfo).port}/v1`).check()).resolves.toBeUndefined();
    } finally { await new Promise((ok) => srv.close(ok)); }
  });

  it.each<[string | null, number | undefined]>([
    ['2', 2000], ['0.5', 500], [new Date(Date.UTC(2030, 0, 1, 0, 0, 30)).toUTCString(), 30_000], ['soon', undefined], [null, undefined],
  ])('reads Retry-After %s', (header, ms) => {
    expect(retryAfterMs(header, Date.UTC(2030, 0, 1))).toBe(ms);
  });
});

it('checks GGUF paths at start: a missing file is named in the log before any job', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'inference-start-'));
  const lines: string[] = [];
  const svc = await startInferenceService({
    dataDir: dir, worker: false, log: (m) => lines.push(m),
    env: { ACCESS_TOKENS: 't', INFERENCE_MODEL_MISTRAL_7B: 'gguf:/nonexistent/mistral.gguf' },
  });
  try {
    expect(lines).toContain("inference: model 'mistral_7b' maps to the GGUF file '/nonexistent/mistral.gguf', which does not exist; jobs for it are refused");
  } finally {
    await svc.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});
