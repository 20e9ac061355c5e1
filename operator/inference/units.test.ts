// Unit tests of the small pieces: tokens, configuration, result file names, the demo GGUF and the job store.
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import Database from 'better-sqlite3';
import { SecretBox } from '../secrets/sealed.js';
import { bearerToken, hashToken, JobSecrets, tokenMatches } from './auth.js';
import { CONTRACT_MODEL_IDS, defaultThreads, loadInferenceConfig } from './config.js';
import { JobStore, type JobRow } from './db.js';
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

const box = new SecretBox(Buffer.alloc(32, 7));
const secrets = new JobSecrets(box);
const jobOf = (id: string, token: string, over: Partial<JobRow> = {}) => ({
  id, token_hash: secrets.tokenHash(token), idempotency_key: null, request_hash: 'r', request: '{}',
  folder_sealed: secrets.seal(`${token}/s`, id), session: 's', created: new Date().toISOString(), expires_at: '2999-01-01T00:00:00.000Z', ...over,
});

describe('job store', () => {
  it('commits each item outcome once and keeps idempotency keys per token', () => {
    const s = new JobStore(join(tmp(), 'inference.db'), secrets);
    const job = jobOf('j1', 'tok', { idempotency_key: 'k' });
    expect(s.create(job).created).toBe(true);
    expect(s.create({ ...job, id: 'j2' })).toMatchObject({ created: false, row: { id: 'j1' } });
    expect(s.create({ ...job, id: 'j3', token_hash: secrets.tokenHash('other') }).created).toBe(true);
    s.insertItems('j1', ['a', { custom_id: 'mine', text: 'b' }]);
    s.insertItems('j1', ['ignored']);
    expect(s.items('j1').map((i) => i.custom_id)).toEqual(['0', 'mine']);
    const o = { status: 'DONE' as const, output: 'x', promptTokens: 2, completionTokens: 3 };
    expect(s.finishItem('j1', 0, o)).toBe(true);
    expect(s.finishItem('j1', 0, o)).toBe(false);
    expect(s.get('j1')).toMatchObject({ total: 2, done: 1, completion_tokens: 3 });
    expect(s.pendingItems('j1').map((i) => i.idx)).toEqual([1]);
    expect(s.resultStem('j1', { stem: 'first', file: 'first.json' })).toEqual({ stem: 'first', file: 'first.json' });
    expect(s.resultStem('j1', { stem: 'second', file: 'second.json' }).stem).toBe('first');
    s.close();
  });

  it('numbers partial files so a rewrite after a crash covers the same items and more', () => {
    const s = new JobStore(join(tmp(), 'inference.db'), secrets);
    s.create(jobOf('j1', 'tok'));
    s.insertItems('j1', ['a', 'b', 'c']);
    const o = { status: 'DONE' as const, output: 'x', promptTokens: 1, completionTokens: 1 };
    s.finishItem('j1', 0, o);
    expect(s.unflushed('j1')).toMatchObject({ part: 1, items: [{ idx: 0 }] });
    // written but not marked (a crash): the next flush takes part 1 again, with the newer item too
    s.finishItem('j1', 1, o);
    const again = s.unflushed('j1');
    expect(again.part).toBe(1);
    expect(again.items.map((i) => i.idx)).toEqual([0, 1]);
    s.markFlushed('j1', [0, 1], 1);
    s.finishItem('j1', 2, { ...o, status: 'FAILED', error: 'e' });
    expect(s.unflushed('j1')).toMatchObject({ part: 2, items: [{ idx: 2 }] });
    s.close();
  });

  it('lists one owner\'s jobs newest first, in pages', () => {
    const s = new JobStore(join(tmp(), 'inference.db'), secrets);
    for (let i = 0; i < 5; i++) s.create(jobOf(`a${i}`, 'alice'));
    s.create(jobOf('b0', 'bob'));
    const p1 = s.list(secrets.tokenHash('alice'), 2);
    expect(p1.hasMore).toBe(true);
    const p2 = s.list(secrets.tokenHash('alice'), 2, p1.jobs[1].id);
    const p3 = s.list(secrets.tokenHash('alice'), 2, p2.jobs[1].id);
    const ids = [...p1.jobs, ...p2.jobs, ...p3.jobs].map((j) => j.id);
    expect(new Set(ids).size).toBe(5);
    expect(ids.every((id) => id.startsWith('a'))).toBe(true);
    expect(p3.hasMore).toBe(false);
    s.close();
  });

  it('cancels a queued job at once, a started one through CANCELLING; purges ended jobs after the retention', () => {
    const s = new JobStore(join(tmp(), 'inference.db'), secrets);
    s.create(jobOf('q', 'tok'));
    expect(s.requestCancel('q')).toBe('CANCELLED');
    expect(s.get('q')).toMatchObject({ status: 'CANCELLED', folder_sealed: null });
    expect(s.requestCancel('q')).toBeUndefined();
    s.create(jobOf('r', 'tok'));
    s.insertItems('r', ['a']);
    s.setState('r', 'IN_PROGRESS');
    expect(s.requestCancel('r')).toBe('CANCELLING');
    s.setState('r', 'FINALIZING');
    expect(s.get('r')!.status).toBe('CANCELLING'); // never leaves CANCELLING but to its end
    expect(s.purgeFinished(new Date(Date.now() - 60_000).toISOString())).toBe(0);
    expect(s.purgeFinished(new Date(Date.now() + 60_000).toISOString())).toBe(1);
    expect(s.get('q')).toBeUndefined();
    expect(s.get('r')).toBeDefined();
    s.close();
  });

  it('migrates rows of the previous version: no token left in clear, the owner still recognised', () => {
    const path = join(tmp(), 'inference.db');
    const old = new Database(path);
    old.exec(`CREATE TABLE jobs (id TEXT PRIMARY KEY, token_hash TEXT NOT NULL, idempotency_key TEXT, request_hash TEXT NOT NULL,
      request TEXT NOT NULL, folder TEXT NOT NULL, status TEXT NOT NULL, total INTEGER, done INTEGER NOT NULL DEFAULT 0,
      failed INTEGER NOT NULL DEFAULT 0, prompt_tokens INTEGER NOT NULL DEFAULT 0, completion_tokens INTEGER NOT NULL DEFAULT 0,
      result_key TEXT, error TEXT, backend TEXT, created TEXT NOT NULL, started TEXT, finished TEXT);
      CREATE TABLE items (job_id TEXT NOT NULL, idx INTEGER NOT NULL, input TEXT NOT NULL, status TEXT NOT NULL, output TEXT,
      error TEXT, prompt_tokens INTEGER NOT NULL DEFAULT 0, completion_tokens INTEGER NOT NULL DEFAULT 0,
      attempts INTEGER NOT NULL DEFAULT 0, writes INTEGER NOT NULL DEFAULT 0, finished TEXT, PRIMARY KEY (job_id, idx));`);
    const ins = old.prepare(`INSERT INTO jobs (id, token_hash, request_hash, request, folder, status, result_key, created) VALUES (?, ?, 'r', '{}', ?, ?, ?, 'x')`);
    ins.run('done1', hashToken('secret-tok'), 'secret-tok/s1', 'SUCCESS', 'secret-tok/s1/result-1.json');
    ins.run('run1', hashToken('secret-tok'), 'secret-tok/s2', 'RUNNING', null);
    old.close();
    const s = new JobStore(path, secrets);
    const dump = JSON.stringify(s.db.prepare('SELECT * FROM jobs').all());
    expect(dump).not.toContain('secret-tok');
    // Nor in the files while the store is open (the pages of before the migration are not left in the main file).
    for (const f of readdirSync(dirname(path))) expect(readFileSync(join(dirname(path), f)).includes(Buffer.from('secret-tok')), f).toBe(false);
    expect(s.get('done1')).toMatchObject({ result_file: 'result-1.json', result_stem: 'result-1', session: 's1', folder_sealed: null });
    expect(s.get('run1')!.status).toBe('IN_PROGRESS');
    expect(secrets.open(s.get('run1')!.folder_sealed!, 'run1')).toBe('secret-tok/s2');
    expect(secrets.owns('secret-tok', s.get('done1')!.token_hash)).toBe(true);
    expect(secrets.owns('other', s.get('done1')!.token_hash)).toBe(false);
    s.close();
    new JobStore(path, secrets).close(); // a second open does not migrate again
  });
});

describe('job secrets', () => {
  it('hash tokens with the service key: another key gives another hash; folders open only for their job', () => {
    const other = new JobSecrets(new SecretBox(Buffer.alloc(32, 8)));
    expect(secrets.tokenHash('t')).not.toBe(other.tokenHash('t'));
    expect(secrets.tokenHash('t')).not.toBe(hashToken('t'));
    const sealed = secrets.seal('t/s', 'job-a');
    expect(sealed).not.toContain('t/s');
    expect(secrets.open(sealed, 'job-a')).toBe('t/s');
    expect(secrets.open(sealed, 'job-b')).toBeUndefined();
  });

  it('derive idempotent task ids under the service key: a row (id beside its idempotency key) does not allow guessing the token offline', () => {
    const id = secrets.idempotentTaskId('my-token', 'job-1');
    const unkeyed = (guess: string): string => createHash('sha256').update(`flowpilot-inference\0${guess}\0job-1`).digest('hex').slice(0, 32);
    expect(id).not.toBe(unkeyed('my-token'));
    expect(id).not.toBe(createHash('sha256').update('my-token\0job-1').digest('hex').slice(0, 32));
    expect(new JobSecrets(new SecretBox(Buffer.alloc(32, 8))).idempotentTaskId('my-token', 'job-1')).not.toBe(id);
  });
});
