// The batch service as OpenAI Batch / Bedrock batch users rely on it, over real HTTP, real s3rver, the real demo GGUF
// and a scripted OpenAI-compatible model server (model-server.ts): JSONL results, list, cancel, completion window,
// retention, tokens never stored in clear, failing early, transient model-server errors and structured-output retries.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ensureDemoModel } from '../../operator/inference/gguf-demo.js';
import { listKeys, MODELS_DIR, postJson, readObject, s3Env, startS3, startService, waitForResult, type S3Fixture, type ServiceFixture } from './helpers.js';
import { closedPort, promptOf, startModelServer, type ModelServer } from './model-server.js';

vi.setConfig({ testTimeout: 120_000 });
const TOKEN = 'lifecycle-token-0123456789';
const OTHER = 'another-token-9876543210';
const auth = (t = TOKEN): Record<string, string> => ({ authorization: `Bearer ${t}` });
let s3: S3Fixture;
let svc: ServiceFixture;
let model: ModelServer;
let downPort: number;
/** A GGUF file mapped by path (`gguf:`), as a real model is: the demo file stands in for one. */
let ggufFile: string;

/** The user message of a chat request (the question, a blank line, the input). */

beforeAll(async () => {
  s3 = await startS3(['bucket']);
  model = await startModelServer();
  downPort = await closedPort();
  ggufFile = ensureDemoModel(MODELS_DIR);
  svc = await startService(() => ({
    ...s3Env(s3, [TOKEN, OTHER]),
    INFERENCE_MODEL_FAKE: `openai:${model.url}#served`,
    INFERENCE_MODEL_DOWN: `openai:http://127.0.0.1:${downPort}/v1`,
    INFERENCE_MODEL_MISSING: 'gguf:/nonexistent/models/missing.gguf',
    INFERENCE_MODEL_LOCAL: `gguf:${ggufFile}`,
    INFERENCE_SERVER_RETRIES: '3', INFERENCE_FLUSH_ITEMS: '1',
  }));
  // Scripted by input text: "wait" holds the request, "json-bad" answers an out-of-range number, "garbage" a non-JSON
  // body, "always500" fails for good, "flaky" fails transiently three ways before answering.
  const flaky: number[] = [];
  model.reply = (_n, body) => {
    const p = promptOf(body);
    if (p.includes('wait')) return { kind: 'hold' };
    if (p.includes('json-bad')) return { kind: 'ok', text: '{"n": 1000}' };
    if (p.includes('garbage')) return { kind: 'malformed', body: '<html>bad gateway</html>' };
    if (p.includes('always500')) return { kind: 'status', status: 500 };
    if (p.includes('flaky')) {
      flaky.push(Date.now());
      const r = flaky.length;
      if (r === 1) return { kind: 'status', status: 429, retryAfter: '1' };
      if (r === 2) return { kind: 'status', status: 503 };
      if (r === 3) return { kind: 'drop' };
      return { kind: 'ok', text: 'recovered' };
    }
    return { kind: 'ok', text: 'fine' };
  };
  (model as ModelServer & { flaky: number[] }).flaky = flaky;
});
afterAll(async () => { await svc?.close(); await model?.close(); await s3?.close(); });

const base = (over: Record<string, unknown> = {}): Record<string, unknown> => ({
  model: 'fake', question: 'Q', bucket_name: 'bucket', session: 'life', max_tokens: 8, list_inputs: ['a'], ...over,
});
const submit = async (over: Record<string, unknown>, token = TOKEN): Promise<string> => {
  const r = await postJson(`${svc.url}/v1/completions`, base(over), auth(token));
  expect(r.status).toBe(202);
  return r.body.task_id as string;
};
const view = async (id: string, token?: string): Promise<any> =>
  (await fetch(`${svc.url}/get_result/${id}`, token ? { headers: auth(token) } : {})).json();
const until = async (id: string, ok: (v: any) => boolean): Promise<any> => {
  for (let i = 0; i < 1200; i++) { const v = await view(id); if (ok(v)) return v; await new Promise((r) => setTimeout(r, 50)); }
  throw new Error(`job ${id} never reached the expected state`);
};
const jsonlOf = async (key: string): Promise<any[]> => (await readObject(s3.client, 'bucket', key)).split('\n').filter(Boolean).map((l) => JSON.parse(l));

describe('results', () => {
  it('writes output and error JSONL files and a manifest (custom_id from the input, else its index) besides the JSON document', async () => {
    await s3.client.putObject('bucket', `${TOKEN}/jsonl/in.json`, JSON.stringify([{ custom_id: 'rev-1', text: 'great' }, 'plain', 42]));
    const id = await submit({ model: 'llama2_7b', session: 'jsonl', list_inputs: undefined, input_json_file: 'in.json', max_tokens: 4 });
    const v = await waitForResult(svc.url, id, TOKEN);
    expect(v).toMatchObject({ status: 'SUCCESS', state: 'SUCCESS', backend: 'demo-random-weights', progress: { total: 3, done: 2, failed: 1 } });
    expect(v.model_file).toMatch(/\.gguf$/);
    const folder = `${TOKEN}/jsonl/`;
    const out = await jsonlOf(folder + v.files.output);
    expect(out.map((l) => l.custom_id)).toEqual(['rev-1', '1']);
    expect(out.every((l) => typeof l.output === 'string' && l.completion_tokens > 0)).toBe(true);
    const errors = await jsonlOf(folder + v.files.errors);
    expect(errors).toEqual([{ custom_id: '2', index: 2, error: { code: 'invalid_input', message: expect.stringContaining('unsupported input (number)') } }]);
    const manifest = JSON.parse(await readObject(s3.client, 'bucket', folder + v.files.manifest));
    expect(manifest).toMatchObject({ task_id: id, state: 'SUCCESS', backend: 'demo-random-weights', counts: { total: 3, done: 2, failed: 1, not_generated: 0 } });
    expect(manifest.model_file).toBe(v.model_file);
    const doc = JSON.parse(await readObject(s3.client, 'bucket', v.result_key));
    expect(doc.results.map((r: { custom_id: string }) => r.custom_id)).toEqual(['rev-1', '1', '2']);
    expect(doc.model_file).toBe(v.model_file);
    // the partial files were written while it ran (one per item here) and removed once the full files exist
    expect((await listKeys(s3.client, 'bucket', folder)).some((k) => k.includes('-partial/'))).toBe(false);
    const keys = (await listKeys(s3.client, 'bucket', folder)).sort();
    expect(keys.at(-1)).toBe(v.result_key);
  });

  it('runs a model mapped to a GGUF file by path through the llama.cpp loading path, and names the file in the results', async () => {
    const id = await submit({ model: 'local', session: 'gguf', list_inputs: ['one', 'two'], max_tokens: 4 });
    const v = await waitForResult(svc.url, id, TOKEN);
    expect(v).toMatchObject({ status: 'SUCCESS', backend: 'llama-cpp', model_file: ggufFile, progress: { total: 2, done: 2, failed: 0 } });
    expect(v.tokens.completion).toBeGreaterThan(0);
    const manifest = JSON.parse(await readObject(s3.client, 'bucket', `${TOKEN}/gguf/${v.files.manifest}`));
    expect(manifest).toMatchObject({ backend: 'llama-cpp', model_file: ggufFile });
  });

  it('lists details of every model: backend, file or URL, context size', async () => {
    const r = await (await fetch(`${svc.url}/v1/models`)).json() as { data: Record<string, unknown>[] };
    const byId = Object.fromEntries(r.data.map((m) => [m.id, m]));
    expect(byId.fake).toMatchObject({ backend: 'openai-compatible', url: `${model.url}#served`, context_size: null });
    expect(byId.llama2_7b).toMatchObject({ backend: 'demo-random-weights', file: expect.stringMatching(/\.gguf$/), context_size: 1024 });
    expect(byId.missing).toMatchObject({ backend: 'llama-cpp', file: '/nonexistent/models/missing.gguf', context_size: 4096 });
    expect(byId.local).toMatchObject({ backend: 'llama-cpp', file: ggufFile, context_size: 4096 });
  });
});

describe('list', () => {
  it("pages the caller's own jobs, newest first, and nobody else's", async () => {
    const mine = [await submit({ session: 'list' }), await submit({ session: 'list' }), await submit({ session: 'list' })];
    const theirs = await submit({ session: 'list' }, OTHER);
    const page1 = await (await fetch(`${svc.url}/v1/batches?limit=2`, { headers: auth() })).json() as any;
    expect(page1).toMatchObject({ object: 'list', has_more: true });
    expect(page1.data).toHaveLength(2);
    const seen: string[] = page1.data.map((j: { task_id: string }) => j.task_id);
    let after = page1.last_id;
    for (let more = true; more;) {
      const p = await (await fetch(`${svc.url}/v1/batches?limit=2&after=${after}`, { headers: auth() })).json() as any;
      seen.push(...p.data.map((j: { task_id: string }) => j.task_id));
      more = p.has_more; after = p.last_id;
    }
    expect(seen).toEqual(expect.arrayContaining(mine));
    expect(seen).not.toContain(theirs);
    expect(new Set(seen).size).toBe(seen.length);
    const created = await Promise.all(seen.map(async (id) => (await view(id)).created as string));
    expect([...created].sort().reverse()).toEqual(created);
    const other = await (await fetch(`${svc.url}/v1/batches`, { headers: auth(OTHER) })).json() as any;
    expect(other.data.map((j: { task_id: string }) => j.task_id)).toEqual([theirs]);
    expect((await fetch(`${svc.url}/v1/batches`)).status).toBe(401);
    const bad = await fetch(`${svc.url}/v1/batches?limit=0`, { headers: auth() });
    expect(bad.status).toBe(400);
    expect((await bad.json() as { field: string }).field).toBe('limit');
  });
});

describe('cancel and expiry', () => {
  it('cancels a running job (POST /v1/batches/{id}/cancel): finished items are kept, the rest reported cancelled', async () => {
    const id = await submit({ session: 'cancel', list_inputs: ['ok-1', 'ok-2', 'wait-3', 'wait-4'] });
    await until(id, (v) => v.progress.done === 2);
    expect(model.held()).toBeGreaterThan(0);
    // While it runs the DB holds the sealed folder: the token appears in no file of the data directory.
    for (const f of readdirSync(svc.dataDir).filter((n) => n.startsWith('inference.db'))) {
      expect(readFileSync(join(svc.dataDir, f)).includes(Buffer.from(TOKEN))).toBe(false);
    }
    expect((await postJson(`${svc.url}/v1/batches/${id}/cancel`, {}, auth(OTHER))).status).toBe(404);
    expect((await postJson(`${svc.url}/v1/batches/${id}/cancel`, {})).status).toBe(401);
    const r = await postJson(`${svc.url}/v1/batches/${id}/cancel`, {}, auth());
    expect(r.status).toBe(200);
    expect(['CANCELLING', 'CANCELLED']).toContain(r.body.state);
    const v = await waitForResult(svc.url, id, TOKEN);
    expect(v).toMatchObject({ status: 'FAILED', state: 'CANCELLED', progress: { total: 4, done: 2, failed: 0 } });
    expect(v.error).toContain('cancelled by its owner; 2 of 4 items finished');
    const folder = `${TOKEN}/cancel/`;
    expect((await jsonlOf(folder + v.files.output)).map((l) => l.custom_id)).toEqual(['0', '1']);
    expect((await jsonlOf(folder + v.files.errors)).map((l) => [l.custom_id, l.error.code])).toEqual([['2', 'cancelled'], ['3', 'cancelled']]);
    model.release();
  });

  it('cancels a queued job at once through the contract route (DELETE /get_result/{id}); a queued job past its window expires', async () => {
    // two held jobs occupy the worker's two slots, so the third waits in QUEUED
    const busy = [await submit({ session: 'busy', list_inputs: ['wait-a'] }), await submit({ session: 'busy', list_inputs: ['wait-b'] })];
    for (const b of busy) await until(b, (v) => v.state === 'IN_PROGRESS');
    const queued = await submit({ session: 'queued' });
    expect((await view(queued)).state).toBe('QUEUED');
    // a queued job whose completion window ends while the worker is busy expires without starting
    const late = await submit({ session: 'late', completion_window: 1 });
    const expired = await until(late, (v) => v.state !== 'QUEUED');
    expect(expired).toMatchObject({ status: 'FAILED', state: 'EXPIRED', progress: { total: null }, error: expect.stringContaining('before the job started') });
    expect((await view(queued)).state).toBe('QUEUED');
    const res = await fetch(`${svc.url}/get_result/${queued}`, { method: 'DELETE', headers: auth() });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ status: 'FAILED', state: 'CANCELLED' });
    for (const b of busy) await fetch(`${svc.url}/get_result/${b}`, { method: 'DELETE', headers: auth() });
    for (const b of busy) expect((await waitForResult(svc.url, b, TOKEN)).state).toBe('CANCELLED');
    model.release();
    // nothing ran for the cancelled queued job: its inputs were never even loaded
    expect((await view(queued)).progress.total).toBeNull();
  });

  it('expires unfinished items at the end of completion_window and keeps the finished ones', async () => {
    const id = await submit({ session: 'expire', list_inputs: ['ok-x', 'wait-y', 'wait-z'], completion_window: 2 });
    const v = await waitForResult(svc.url, id, TOKEN);
    model.release();
    expect(v).toMatchObject({ status: 'FAILED', state: 'EXPIRED', progress: { total: 3, done: 1 } });
    expect(v.error).toContain('completion window ended');
    expect(Date.parse(v.expires_at) - Date.parse(v.created)).toBe(2000);
    const folder = `${TOKEN}/expire/`;
    expect((await jsonlOf(folder + v.files.output)).map((l) => l.output)).toEqual(['fine']);
    expect((await jsonlOf(folder + v.files.errors)).map((l) => l.error.code)).toEqual(['expired', 'expired']);
  });

  it('refuses a completion_window over the limit, naming the setting', async () => {
    const r = await postJson(`${svc.url}/v1/completions`, base({ completion_window: '48h' }), auth());
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ field: 'completion_window', error: expect.stringContaining('INFERENCE_COMPLETION_WINDOW_SECONDS') });
  });

  it('purges the rows of jobs that ended longer ago than the retention', async () => {
    const id = await submit({ session: 'purge' });
    await waitForResult(svc.url, id, TOKEN);
    expect(svc.service.purge(Date.now())).toBe(0);
    expect(svc.service.purge(Date.now() + 721 * 3_600_000)).toBeGreaterThan(0);
    expect((await fetch(`${svc.url}/get_result/${id}`)).status).toBe(404);
  });
});

describe('failing early', () => {
  it('refuses at submit a model whose GGUF file does not exist, naming the path', async () => {
    const r = await postJson(`${svc.url}/v1/completions`, base({ model: 'missing' }), auth());
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({ field: 'model', error: expect.stringContaining("'/nonexistent/models/missing.gguf', which does not exist") });
  });

  it('fails before any generation when the model server is unreachable, naming its URL and the cause', async () => {
    const id = await submit({ model: 'down', session: 'down' });
    const v = await waitForResult(svc.url, id, TOKEN);
    expect(v.status).toBe('FAILED');
    expect(v.error).toContain(`model server http://127.0.0.1:${downPort}/v1 is unreachable (ECONNREFUSED)`);
    expect(v.progress.total).toBeNull(); // no input was even loaded
  });

  it('names a bucket the credentials are refused for, and an unreachable storage endpoint, before any generation', async () => {
    const port = await closedPort();
    const badKey = await startService(() => ({ ...s3Env(s3, [TOKEN]), S3_ACCESS_KEY_ID: 'WRONG', S3_SECRET_ACCESS_KEY: 'WRONG', INFERENCE_MODEL_FAKE: `openai:${model.url}` }));
    const noS3 = await startService(() => ({ ...s3Env(s3, [TOKEN]), S3_ENDPOINT: `http://127.0.0.1:${port}`, INFERENCE_MODEL_FAKE: `openai:${model.url}` }));
    try {
      const before = model.requests.length;
      const a = await postJson(`${badKey.url}/v1/completions`, base({ session: 'creds' }), auth());
      const b = await postJson(`${noS3.url}/v1/completions`, base({ session: 'nos3' }), auth());
      const va = await waitForResult(badKey.url, a.body.task_id, TOKEN);
      const vb = await waitForResult(noS3.url, b.body.task_id, TOKEN);
      expect(va.status).toBe('FAILED');
      expect(va.error).toMatch(/^bucket 'bucket' refused the service's credentials at http:\/\/127\.0\.0\.1:\d+ \(InvalidAccessKeyId/);
      expect(vb.error).toContain(`bucket 'bucket' is unreachable at http://127.0.0.1:${port} (ECONNREFUSED`);
      expect(model.requests.length).toBe(before); // nothing was generated
    } finally { await badKey.close(); await noS3.close(); }
  });
});

describe('model-server errors', () => {
  it('retries 429 (honouring Retry-After), 5xx and a dropped connection per item, then succeeds', async () => {
    const flaky = (model as ModelServer & { flaky: number[] }).flaky;
    const id = await submit({ session: 'flaky', list_inputs: ['flaky', 'steady'], return_output: true });
    const v = await waitForResult(svc.url, id, TOKEN);
    expect(v.status).toBe('SUCCESS');
    expect(v.outputs).toEqual([{ index: 0, output: 'recovered' }, { index: 1, output: 'fine' }]);
    expect(flaky).toHaveLength(4);
    expect(flaky[1] - flaky[0]).toBeGreaterThanOrEqual(1000); // Retry-After: 1
  });

  it('reports a malformed body as a protocol error (not a schema mismatch, not retried) and gives up on a lasting 500', async () => {
    const schema = { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] };
    const before = model.requests.length;
    const id = await submit({ session: 'proto', list_inputs: ['garbage', 'always500'], structured_output: schema });
    const v = await waitForResult(svc.url, id, TOKEN);
    const byPrompt = (s: string): number => model.requests.slice(before).filter((r) => promptOf(r).includes(s)).length;
    expect(byPrompt('garbage')).toBe(1);
    expect(byPrompt('always500')).toBe(4); // 1 + INFERENCE_SERVER_RETRIES
    const errors = await jsonlOf(`${TOKEN}/proto/${v.files.errors}`);
    expect(errors.map((e) => e.error.code)).toEqual(['protocol_error', 'model_error']);
    expect(errors[0].error.message).toMatch(/^protocol error: model server http:\/\/127\.0\.0\.1:\d+\/v1 answered a body that is not JSON/);
    expect(errors[1].error.message).toContain('HTTP 500');
    expect(errors[1].error.message).toContain('after 4 attempts');
  });
});

describe('structured output', () => {
  const schema = { type: 'object', properties: { n: { type: 'integer', minimum: 0, maximum: 10 } }, required: ['n'] };

  it('retries a mismatching answer with another seed and a higher temperature', async () => {
    const before = model.requests.length;
    const id = await submit({ session: 'mismatch', list_inputs: ['json-bad'], structured_output: schema, temperature: 0 });
    const v = await waitForResult(svc.url, id, TOKEN);
    expect(v.status).toBe('FAILED');
    const tries = model.requests.slice(before).filter((r) => promptOf(r).includes('json-bad'));
    expect(tries).toHaveLength(3);
    expect(new Set(tries.map((t) => t.seed)).size).toBe(3);
    const temps = tries.map((t) => t.temperature as number);
    expect(temps[0]).toBe(0);
    expect(temps[1]).toBeGreaterThan(temps[0]);
    expect(temps[2]).toBeGreaterThan(temps[1]);
  });

  it('enforces exclusive bounds and multipleOf in the grammar: the random-weights model answers in range every time', async () => {
    const bounded = {
      type: 'object', required: ['score', 'bucket'],
      properties: { score: { type: 'integer', exclusiveMinimum: 0, exclusiveMaximum: 6 }, bucket: { type: 'integer', minimum: 0, maximum: 900, multipleOf: 300 } },
    };
    for (let seed = 1; seed <= 6; seed++) {
      const r = await postJson(`${svc.url}/v1/chat/completions`, {
        model: 'llama2_7b', seed, temperature: 1, max_tokens: 96, messages: [{ role: 'user', content: 'Rate it' }],
        response_format: { type: 'json_schema', json_schema: { schema: bounded } },
      }, auth());
      expect(r.body.error ?? null, JSON.stringify(r.body)).toBeNull();
      expect(r.status).toBe(200);
      const v = JSON.parse(r.body.choices[0].message.content) as { score: number; bucket: number };
      expect(v.score).toBeGreaterThan(0);
      expect(v.score).toBeLessThan(6);
      expect([0, 300, 600, 900]).toContain(v.bucket);
    }
  });

  it('answers /v1/chat/completions with the raw answer and the error on a mismatch (422, not 500)', async () => {
    const r = await postJson(`${svc.url}/v1/chat/completions`, {
      model: 'fake', messages: [{ role: 'user', content: 'json-bad' }],
      response_format: { type: 'json_schema', json_schema: { schema } },
    }, auth());
    expect(r.status).toBe(422);
    expect(r.body.choices[0].message.content).toBe('{"n": 1000}');
    expect(r.body.error).toMatchObject({ type: 'schema_mismatch', message: expect.stringContaining('must be <= 10') });
  });
});
