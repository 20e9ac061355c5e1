// Unit tests of the small pieces: tokens, configuration, result file names, the demo GGUF and the job store.
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { bearerToken, hashToken, tokenMatches } from './auth.js';
import { CONTRACT_MODEL_IDS, defaultThreads, loadInferenceConfig } from './config.js';
import { JobStore } from './db.js';
import { buildDemoVocab, writeDemoGguf } from './gguf-demo.js';
import { resultFileName } from './runner.js';

const dirs: string[] = [];
const tmp = (): string => { const d = mkdtempSync(join(tmpdir(), 'inf-unit-')); dirs.push(d); return d; };
afterEach(() => { for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true }); });

describe('access tokens', () => {
  it('matches hashes only', () => {
    const hashes = [hashToken('a-token'), hashToken('b-token')];
    expect(tokenMatches('b-token', hashes)).toBe(true);
    expect(tokenMatches('c-token', hashes)).toBe(false);
    expect(tokenMatches('a-token', [])).toBe(false);
  });
  it.each([['Bearer abc', 'abc'], ['bearer  abc ', 'abc'], ['Basic abc', undefined], [undefined, undefined]])('bearer %s', (h, t) =>
    expect(bearerToken(h)).toBe(t));
});

describe('configuration', () => {
  it('maps the six ids to the demo model by default and reads overrides', () => {
    const c = loadInferenceConfig({
      ACCESS_TOKENS: 'x1,x2', INFERENCE_MODEL_LLAMA3_70B: 'openai:http://vllm:8000/v1#meta-llama/Meta-Llama-3-70B-Instruct',
      INFERENCE_MODEL_LLAMA3_70B_API_KEY: 'k', INFERENCE_MODEL_MISTRAL_7B: 'gguf:/models/mistral.gguf',
    });
    expect(Object.keys(c.models)).toEqual(expect.arrayContaining([...CONTRACT_MODEL_IDS]));
    expect(c.models.llama3_70b).toEqual({ backend: 'openai', baseUrl: 'http://vllm:8000/v1', model: 'meta-llama/Meta-Llama-3-70B-Instruct', apiKey: 'k' });
    expect(c.models.mistral_7b).toMatchObject({ backend: 'llama-cpp', modelPath: '/models/mistral.gguf' });
    expect(c.demoModelIds).toEqual(['llama2_70b', 'llama2_7b', 'codellama_70b', 'mixtral_8x7']);
    expect(c.tokenHashes).toEqual([hashToken('x1'), hashToken('x2')]);
    expect(c.threads).toBe(defaultThreads());
    expect(loadInferenceConfig({ INFERENCE_THREADS: '3' }).threads).toBe(3);
  });
  it('reads a token file of raw tokens and sha256 lines (a mounted Secret)', () => {
    const f = join(tmp(), 'tokens');
    writeFileSync(f, `# issued 2026-01\nraw-token-1\nsha256:${hashToken('hashed-token-2').toUpperCase()}\n`);
    const c = loadInferenceConfig({ ACCESS_TOKENS_FILE: f });
    expect(tokenMatches('raw-token-1', c.tokenHashes)).toBe(true);
    expect(tokenMatches('hashed-token-2', c.tokenHashes)).toBe(true);
    expect(tokenMatches('# issued 2026-01', c.tokenHashes)).toBe(false);
  });
});

describe('result file names', () => {
  it('sort after every existing name, by byte order', () => {
    const now = new Date('2026-01-02T03:04:05.678Z');
    expect(resultFileName('abcdef0123456789', ['inputs.json'], now)).toBe('result-20260102T030405678Z-abcdef012345.json');
    const n = resultFileName('abcdef0123456789', ['zzz.json', '~result-x.json'], now);
    expect(n > 'zzz.json' && n > '~result-x.json').toBe(true);
  });
});

describe('demo GGUF', () => {
  it('is deterministic and starts with the GGUF v3 header', () => {
    const [a, b] = [join(tmp(), 'a.gguf'), join(tmp(), 'b.gguf')];
    const shape = { embedding: 32, layers: 1, heads: 2, feedForward: 64, contextLength: 256, seed: 3 };
    writeDemoGguf(a, shape);
    writeDemoGguf(b, shape);
    const [x, y] = [readFileSync(a), readFileSync(b)];
    expect(x.subarray(0, 4).toString()).toBe('GGUF');
    expect(x.readUInt32LE(4)).toBe(3);
    expect(createHash('sha256').update(x).digest('hex')).toBe(createHash('sha256').update(y).digest('hex'));
  });
  it('has byte fallback tokens for every byte', () => {
    const v = buildDemoVocab();
    expect(v.tokens.filter((t) => /^<0x[0-9A-F]{2}>$/.test(t))).toHaveLength(256);
    expect(new Set(v.tokens).size).toBe(v.tokens.length);
  });
});

describe('job store', () => {
  it('commits each item outcome once and keeps idempotency keys per token', () => {
    const s = new JobStore(join(tmp(), 'inference.db'));
    const job = { id: 'j1', token_hash: 'h', idempotency_key: 'k', request_hash: 'r', request: '{}', folder: 't/s' };
    expect(s.create(job).created).toBe(true);
    expect(s.create({ ...job, id: 'j2' })).toMatchObject({ created: false, row: { id: 'j1' } });
    expect(s.create({ ...job, id: 'j3', token_hash: 'other' }).created).toBe(true);
    s.insertItems('j1', ['a', 'b']);
    s.insertItems('j1', ['ignored']);
    const o = { status: 'DONE' as const, output: 'x', promptTokens: 2, completionTokens: 3 };
    expect(s.finishItem('j1', 0, o)).toBe(true);
    expect(s.finishItem('j1', 0, o)).toBe(false);
    expect(s.get('j1')).toMatchObject({ total: 2, done: 1, completion_tokens: 3 });
    expect(s.pendingItems('j1').map((i) => i.idx)).toEqual([1]);
    expect(s.resultKey('j1', 'first')).toBe('first');
    expect(s.resultKey('j1', 'second')).toBe('first');
    s.close();
  });
});
