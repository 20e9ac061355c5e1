// Crash safety: the service runs in a child process that is killed with SIGKILL in the middle of a job; the partial
// JSONL results it flushed survive in the bucket, and a restarted service resumes the job, redoes no finished item
// and writes no item twice (the final output JSONL holds each input once).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { listKeys, postJson, readObject, s3Env, startS3, waitForResult, type S3Fixture } from './helpers.js';

const TOKEN = 'crash-token-42';
let s3: S3Fixture;
let dataDir: string;
const children: ChildProcess[] = [];

beforeAll(async () => { s3 = await startS3(['bucket']); dataDir = mkdtempSync(join(tmpdir(), 'inference-crash-')); });
afterAll(async () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
  await s3?.close();
  rmSync(dataDir, { recursive: true, force: true });
});

function startChild(): Promise<{ child: ChildProcess; url: string }> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, 'fixtures/serve.ts')], {
    env: { ...process.env, ...s3Env(s3, [TOKEN]), DATA_DIR: dataDir, PORT: '0', INFERENCE_FLUSH_ITEMS: '1' }, stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.push(child);
  return new Promise((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /READY (\d+)/.exec(out);
      if (m) resolve({ child, url: `http://127.0.0.1:${m[1]}` });
    });
    child.on('exit', (code) => reject(new Error(`service exited early (${code})`)));
  });
}

interface Row { idx: number; status: string; output: string | null; finished: string | null; attempts: number; writes: number }
const readItems = (taskId: string): Row[] => {
  const db = new Database(join(dataDir, 'inference.db'), { readonly: true });
  try { return db.prepare('SELECT idx, status, output, finished, attempts, writes FROM items WHERE job_id = ? ORDER BY idx').all(taskId) as Row[]; }
  finally { db.close(); }
};

it('resumes after kill -9 without redoing finished items', async () => {
  const first = await startChild();
  const inputs = Array.from({ length: 24 }, (_, i) => `input ${i}`);
  const sub = await postJson(`${first.url}/v1/completions`, {
    model: 'llama2_7b', question: 'Summarise', list_inputs: inputs, bucket_name: 'bucket', session: 'crash', max_tokens: 64,
  }, { authorization: `Bearer ${TOKEN}` });
  expect(sub.status).toBe(202);
  const taskId = sub.body.task_id as string;
  const partialKeys = async (): Promise<string[]> => (await listKeys(s3.client, 'bucket', `${TOKEN}/crash/`)).filter((k) => k.includes('-partial/output-'));
  for (let i = 0; i < 2000; i++) {
    const r = await (await fetch(`${first.url}/get_result/${taskId}`)).json() as { progress: { done: number } };
    if (r.progress.done >= 2 && (await partialKeys()).length > 0) break;
    await new Promise((res) => setTimeout(res, 10));
  }
  first.child.kill('SIGKILL');
  await new Promise((res) => first.child.once('exit', res));

  const before = readItems(taskId);
  const finishedBefore = before.filter((r) => r.status !== 'PENDING');
  expect(finishedBefore.length).toBeGreaterThanOrEqual(2);
  expect(finishedBefore.length).toBeLessThan(inputs.length); // killed mid-job
  // The partial JSONL files in the bucket hold finished items only, each once, with their committed outputs.
  const partial = (await Promise.all((await partialKeys()).map(async (k) => (await readObject(s3.client, 'bucket', k)).split('\n').filter(Boolean))))
    .flat().map((l) => JSON.parse(l) as { custom_id: string; index: number; output: string });
  expect(partial.length).toBeGreaterThan(0);
  expect(new Set(partial.map((l) => l.custom_id)).size).toBe(partial.length);
  for (const l of partial) expect(JSON.stringify(l.output)).toBe(before[l.index].output);

  const second = await startChild();
  const res = await waitForResult(second.url, taskId, TOKEN);
  expect(res.status).toBe('SUCCESS');
  expect(res.progress).toEqual({ total: 24, done: 24, failed: 0 });
  const after = readItems(taskId);
  for (const b of finishedBefore) {
    const a = after[b.idx];
    expect(a).toMatchObject({ output: b.output, finished: b.finished, attempts: 1 });
  }
  for (const a of after) expect(a.writes).toBe(1);
  const doc = JSON.parse(await readObject(s3.client, 'bucket', res.result_key));
  expect(doc.results.map((r: { input: string }) => r.input)).toEqual(inputs);
  const output = (await readObject(s3.client, 'bucket', `${TOKEN}/crash/${res.files.output}`)).split('\n').filter(Boolean).map((l) => JSON.parse(l));
  expect(output.map((l: { custom_id: string }) => l.custom_id)).toEqual(inputs.map((_, i) => String(i))); // each input once
  for (const b of finishedBefore) expect(JSON.stringify(output[b.idx].output)).toBe(b.output);
  expect(await partialKeys()).toEqual([]);
  second.child.kill('SIGTERM');
}, 180_000);
