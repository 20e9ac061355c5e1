// Black-box tests of the batch inference API over real HTTP, a real S3-protocol server (s3rver) and the real
// node-llama-cpp running the generated random-weights GGUF: auth, validation, idempotency, results, schemas.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { listKeys, postJson, readObject, s3Env, startS3, startService, waitForResult, type S3Fixture, type ServiceFixture } from './helpers.js';


// Model-backed tests run on a shared 2-core machine: allow for CPU contention.
vi.setConfig({ testTimeout: 120_000 });
const TOKEN = 'tok-test-0123456789';
const auth = { authorization: `Bearer ${TOKEN}` };
let s3: S3Fixture;
let svc: ServiceFixture;

beforeAll(async () => {
  s3 = await startS3(['bucket']);
  // mistral_7b is served through the OpenAI-compatible backend by this same server's /v1/chat/completions.
  svc = await startService((port) => ({
    ...s3Env(s3, [TOKEN]), INFERENCE_MODEL_MISTRAL_7B: `openai:http://127.0.0.1:${port}/v1#llama2_7b`,
    INFERENCE_MODEL_MISTRAL_7B_API_KEY: TOKEN,
  }));
});
afterAll(async () => { await svc?.close(); await s3?.close(); });

const base = (over: Record<string, unknown> = {}): Record<string, unknown> => ({
  model: 'llama2_7b', question: 'Sentiment?', bucket_name: 'bucket', session: 's1', max_tokens: 12,
  list_inputs: ['good product', 'bad service'], ...over,
});

describe('authentication', () => {
  it.each([
    ['no header', {}],
    ['wrong token', { authorization: 'Bearer nope' }],
    ['not bearer', { authorization: `Basic ${TOKEN}` }],
  ])('refuses %s with 401 and starts nothing', async (_name, headers) => {
    const r = await postJson(`${svc.url}/v1/completions`, base({ session: 'unauth' }), headers as Record<string, string>);
    expect(r.status).toBe(401);
    expect(r.body.task_id).toBeUndefined();
    expect(await listKeys(s3.client, 'bucket', `${TOKEN}/unauth/`)).toEqual([]);
  });
});

describe('validation', () => {
  it.each([
    ['model', { model: 'gpt-17' }],
    ['model', { model: undefined }],
    ['structured_output', { structured_output: { type: 'nonsense' } }],
    ['list_inputs', { list_inputs: undefined }],
    ['list_inputs', { list_inputs: 'not a list' }],
    ['bucket_name', { bucket_name: undefined }],
    ['session', { session: '../x' }],
    ['max_tokens', { max_tokens: 0 }],
    ['storage_provider', { storage_provider: 'azure' }],
    ['input_json_file', { input_json_file: '../other/in.json' }],
    ['role_arn', { role_arn: 'not-an-arn' }],
    ['return_output', { return_output: 'yes' }],
  ])('answers 400 naming %s', async (field, over) => {
    const r = await postJson(`${svc.url}/v1/completions`, base(over), auth);
    expect(r.status).toBe(400);
    expect(r.body.field).toBe(field);
    expect(r.body.error).toContain(field);
  });

  it('answers 400 for a body that is not JSON', async () => {
    const res = await fetch(`${svc.url}/v1/completions`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: '{oops' });
    expect(res.status).toBe(400);
  });

  it('answers 404 for an unknown task id', async () => {
    const res = await fetch(`${svc.url}/get_result/${'0'.repeat(32)}`);
    expect(res.status).toBe(404);
  });
});

describe('jobs', () => {
  it('runs list_inputs and an input file, writes one result entry per input in order, returns outputs', async () => {
    await s3.client.putObject('bucket', `${TOKEN}/s2/inputs.json`, JSON.stringify(['from file 1', { text: 'from file 2' }, 42]));
    const r = await postJson(`${svc.url}/v1/completions`, base({ session: 's2', input_json_file: 'inputs.json', return_output: true }), auth);
    expect(r.status).toBe(202);
    expect(r.body.task_id).toMatch(/^[0-9a-f]{32}$/);
    const res = await waitForResult(svc.url, r.body.task_id, TOKEN);
    expect(res.status).toBe('SUCCESS');
    expect(res.progress).toEqual({ total: 5, done: 4, failed: 1 });
    expect(res.tokens.completion).toBeGreaterThan(0);
    expect(res.backend).toBe('demo-random-weights');
    expect(res.outputs).toHaveLength(5);
    expect(res.outputs[4].error).toMatch(/unsupported input/);
    const keys = await listKeys(s3.client, 'bucket', `${TOKEN}/s2/`);
    expect(keys.sort().at(-1)).toBe(res.result_key);
    const doc = JSON.parse(await readObject(s3.client, 'bucket', res.result_key));
    expect(doc.backend).toBe('demo-random-weights');
    expect(doc.results.map((x: { input: unknown }) => x.input)).toEqual(['good product', 'bad service', 'from file 1', { text: 'from file 2' }, 42]);
    expect(doc.results[4].error).toMatch(/unsupported input/);
    expect(typeof doc.results[0].output).toBe('string');
    expect(doc.results[0].completion_tokens).toBeGreaterThan(0);
  });

  it('reveals result_key (which starts with the token) only to the owner; result_file to anyone', async () => {
    const r = await postJson(`${svc.url}/v1/completions`, base({ session: 'keys', max_tokens: 2, list_inputs: ['x'] }), auth);
    const owner = await waitForResult(svc.url, r.body.task_id, TOKEN);
    const anon = await (await fetch(`${svc.url}/get_result/${r.body.task_id}`)).json() as Record<string, unknown>;
    const other = await waitForResult(svc.url, r.body.task_id, 'someone-else');
    expect(owner.result_key).toBe(`${TOKEN}/keys/${owner.result_file}`);
    expect(anon.status).toBe('SUCCESS');
    expect(anon.result_file).toBe(owner.result_file);
    expect('result_key' in anon).toBe(false);
    expect('result_key' in other).toBe(false);
  });

  it('names each new result so it sorts after the inputs and earlier results', async () => {
    await s3.client.putObject('bucket', `${TOKEN}/s3/zzz-inputs.json`, JSON.stringify(['x']));
    const keys: string[] = [];
    for (let i = 0; i < 2; i++) {
      const r = await postJson(`${svc.url}/v1/completions`, base({ session: 's3', list_inputs: undefined, input_json_file: 'zzz-inputs.json', max_tokens: 4 }), auth);
      keys.push((await waitForResult(svc.url, r.body.task_id, TOKEN)).result_key);
    }
    const all = (await listKeys(s3.client, 'bucket', `${TOKEN}/s3/`)).sort();
    expect(all.at(-1)).toBe(keys[1]);
    // Each job's JSONL files and manifest sort before its JSON document, after everything that was there before it.
    expect(all.filter((k) => k.endsWith('.json') && !k.endsWith('-manifest.json') && !k.endsWith('zzz-inputs.json'))).toEqual(keys);
    const second = keys[1].replace(/\.json$/, '');
    expect(all.slice(-4)).toEqual([`${second}-errors.jsonl`, `${second}-manifest.json`, `${second}-output.jsonl`, keys[1]]);
  });

  it('returns the same task_id for a repeated Idempotency-Key, 409 for a different body', async () => {
    const h = { ...auth, 'idempotency-key': 'same-key-1' };
    const a = await postJson(`${svc.url}/v1/completions`, base({ session: 'idem', max_tokens: 4 }), h);
    const b = await postJson(`${svc.url}/v1/completions`, base({ session: 'idem', max_tokens: 4 }), h);
    expect(a.status).toBe(202);
    expect(b.status).toBe(200);
    expect(b.body.task_id).toBe(a.body.task_id);
    const c = await postJson(`${svc.url}/v1/completions`, base({ session: 'idem', max_tokens: 5 }), h);
    expect(c.status).toBe(409);
    const d = await postJson(`${svc.url}/v1/completions`, base({ session: 'idem', max_tokens: 4 }), auth);
    expect(d.body.task_id).not.toBe(a.body.task_id);
    await waitForResult(svc.url, a.body.task_id, TOKEN);
    await waitForResult(svc.url, d.body.task_id, TOKEN);
  });

  it('runs a small job alongside a big one instead of behind it', async () => {
    const big = await postJson(`${svc.url}/v1/completions`, base({ session: 'big', list_inputs: Array.from({ length: 24 }, (_, i) => `b${i}`), max_tokens: 24 }), auth);
    const small = await postJson(`${svc.url}/v1/completions`, base({ session: 'small', list_inputs: ['s'], max_tokens: 2 }), auth);
    const s = await waitForResult(svc.url, small.body.task_id, TOKEN);
    const b = await waitForResult(svc.url, big.body.task_id, TOKEN);
    expect([s.status, b.status]).toEqual(['SUCCESS', 'SUCCESS']);
    expect(s.finished < b.finished).toBe(true);
  });

  it('fails the job with a message naming a missing input file', async () => {
    const r = await postJson(`${svc.url}/v1/completions`, base({ session: 'nofile', list_inputs: undefined, input_json_file: 'absent.json' }), auth);
    const res = await waitForResult(svc.url, r.body.task_id, TOKEN);
    expect(res.status).toBe('FAILED');
    expect(res.error).toContain("'nofile/absent.json' was not found");
  });

  it('fails the job with a message naming an unreachable bucket', async () => {
    const r = await postJson(`${svc.url}/v1/completions`, base({ bucket_name: 'no-such-bucket' }), auth);
    const res = await waitForResult(svc.url, r.body.task_id, TOKEN);
    expect(res.status).toBe('FAILED');
    expect(res.error).toContain("bucket 'no-such-bucket'");
  });

  it('gives the same answers for the same request and seed', async () => {
    const run = async (): Promise<unknown> => {
      const r = await postJson(`${svc.url}/v1/completions`, base({ session: 'det', seed: 7, return_output: true, list_inputs: ['a', 'b', 'c'] }), auth);
      return (await waitForResult(svc.url, r.body.task_id, TOKEN)).outputs;
    };
    const first = await run();
    expect(await run()).toEqual(first);
  });
});

describe('structured output', () => {
  const schema = {
    type: 'object',
    properties: {
      sentiment: { enum: ['positive', 'negative', 'neutral'] },
      score: { type: 'integer', minimum: 0, maximum: 100 },
      topic: { type: 'string', maxLength: 16 },
    },
    required: ['sentiment', 'score', 'topic'],
    additionalProperties: false,
  };

  it('makes every answer valid against the schema', async () => {
    const inputs = Array.from({ length: 6 }, (_, i) => `review number ${i}`);
    const r = await postJson(`${svc.url}/v1/completions`, base({ session: 'json', structured_output: schema, list_inputs: inputs, max_tokens: 64, return_output: true }), auth);
    const res = await waitForResult(svc.url, r.body.task_id, TOKEN);
    expect(res.status).toBe('SUCCESS');
    const { Ajv } = await import('ajv');
    const validate = new Ajv().compile(schema);
    const ok = res.outputs.filter((o: { error?: string }) => !o.error);
    if (ok.length < 5) console.log(JSON.stringify(res.outputs, null, 1));
    expect(ok.length).toBeGreaterThanOrEqual(5);
    for (const o of ok) expect(validate(o.output)).toBe(true);
    const doc = JSON.parse(await readObject(s3.client, 'bucket', res.result_key));
    expect(typeof doc.results[0].output).toBe('object');
  });
});

describe('OpenAI-compatible', () => {
  it('serves /v1/chat/completions with a JSON schema response_format', async () => {
    const r = await postJson(`${svc.url}/v1/chat/completions`, {
      model: 'llama2_7b', messages: [{ role: 'user', content: 'hi' }], max_tokens: 40, seed: 1,
      response_format: { type: 'json_schema', json_schema: { name: 'x', schema: { type: 'object', properties: { ok: { type: 'boolean' } }, required: ['ok'] } } },
    }, auth);
    expect(r.status).toBe(200);
    expect(typeof JSON.parse(r.body.choices[0].message.content).ok).toBe('boolean');
    expect(r.body.usage.completion_tokens).toBeGreaterThan(0);
    const denied = await postJson(`${svc.url}/v1/chat/completions`, { model: 'llama2_7b', messages: [] }, {});
    expect(denied.status).toBe(401);
  });

  it('runs a batch job through the OpenAI-compatible backend over real HTTP', async () => {
    const r = await postJson(`${svc.url}/v1/completions`, base({
      model: 'mistral_7b', session: 'oai', list_inputs: ['one', 'two', 'three'], return_output: true,
      structured_output: { type: 'object', properties: { label: { enum: ['a', 'b'] } }, required: ['label'] }, max_tokens: 32,
    }), auth);
    const res = await waitForResult(svc.url, r.body.task_id, TOKEN);
    if (res.status !== 'SUCCESS') console.log(JSON.stringify(res, null, 1));
    expect(res).toMatchObject({ status: 'SUCCESS' });
    expect(res.backend).toMatch(/^openai-compatible:llama2_7b/);
    expect(res.progress.done).toBe(3);
    for (const o of res.outputs) expect(['a', 'b']).toContain(o.output.label);
  });
});
