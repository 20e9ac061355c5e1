// The black-box flow fixtures as a reusable suite: each `test/flows/*.yaml` holds one or more flows (the first is
// executed) and a last document `expect:` with the final state, task-run counts, attempts, outputs and logs. The same
// fixtures run against the embedded service (fixtures.test.ts) and against cluster mode (test/kube/cluster-fixtures.test.ts).
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';

interface RunExpectation {
  state?: string | string[]; count?: number; attempts?: number | number[]; outputs?: Record<string, unknown>;
  /** Text the (first) run's error contains. */
  error?: string;
}
interface Expectation {
  inputs?: Record<string, unknown>;
  labels?: Record<string, string>;
  state: string;
  taskRunCount?: number;
  taskRuns?: Record<string, RunExpectation>;
  outputs?: Record<string, unknown>;
  executionLabels?: Record<string, string>;
  logs?: string[];
  absentFromLogs?: string[];
  /** Texts the ended execution, as the API returns it, must not contain (`$HTTP` replaced as in inputs). */
  absentFromRecord?: string[];
  resume?: boolean | Record<string, unknown>;
  kill?: boolean;
  status?: number;
  /**
   * Flow-level retry with CREATE_NEW_EXECUTION: the chain of executions of the flow (the first one included) ends with
   * one in `state` (every earlier one RETRIED, all with the first one's originalId, metadata.attemptNumber 1, 2, ...),
   * and holds between `minExecutions` (default 1) and `maxExecutions` executions. An endless chain never reaches `state`.
   */
  retryChain?: { state: string; minExecutions?: number; maxExecutions: number };
  /** Namespaces (Kestra's Namespace JSON, `id` required) stored with PUT /namespaces/{id} before the flows are saved. */
  namespaces?: { id: string }[];
  /** Modes this fixture does not run in (e.g. [cluster]), with the reason in a comment of the fixture. */
  skip?: string[];
  /** Namespace files (path → content) uploaded to the first flow's namespace through the API before it runs. */
  namespaceFiles?: Record<string, string>;
}

/** What a mode provides: the API base (`.../api/v1`), a way to make logs visible, and teardown. */
export interface FixtureHarness { base: string; flushLogs(): Promise<void>; close(): Promise<void> }

const DIR = new URL('.', import.meta.url).pathname;
export const FIXTURES = readdirSync(DIR).filter((f) => f.endsWith('.yaml')).sort();
export const FIXTURE_SECRETS = { SECRET_TOKEN: Buffer.from('s3cr3t-value').toString('base64') };

const TERMINAL = ['SUCCESS', 'WARNING', 'FAILED', 'KILLED', 'CANCELLED', 'RETRIED'];

async function json(url: string, init?: RequestInit): Promise<{ status: number; body: any }> {
  const res = await fetch(url, init);
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

function matchesSubset(actual: unknown, expected: unknown): void {
  if (expected && typeof expected === 'object' && !Array.isArray(expected)) {
    expect(actual, JSON.stringify(actual)).toBeTypeOf('object');
    for (const [k, v] of Object.entries(expected)) matchesSubset((actual as Record<string, unknown>)[k], v);
  } else {
    expect(actual).toEqual(expected);
  }
}

/** At most `n` bodies at once: concurrent tests wait for a slot (each fixture uses flows and namespaces of its own). */
function slots(n: number): <T>(body: () => Promise<T>) => Promise<T> {
  let running = 0;
  const waiting: (() => void)[] = [];
  return async (body) => {
    if (running >= n) await new Promise<void>((r) => waiting.push(r));
    else running++;
    try { return await body(); } finally {
      const next = waiting.shift();
      if (next) next(); else running--;
    }
  };
}

/**
 * Declares one test per fixture in `mode`, against the harness `start` returns. `concurrency` > 1 runs that many
 * fixtures at once (cluster mode: most of a fixture's time is task Pods, processes of their own, starting).
 */
export function fixtureSuite(mode: string, start: () => Promise<FixtureHarness>, opts: { timeoutMs?: number; only?: string[]; concurrency?: number } = {}): void {
  let env: FixtureHarness;
  let http: Server;
  let base = '';
  let httpBase = '';
  const waitMs = opts.timeoutMs ?? 20_000;

  beforeAll(async () => {
    env = await start();
    base = env.base;
    http = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        const status = Number(new URL(req.url!, 'http://x').searchParams.get('status') ?? 200);
        res.writeHead(status, { 'content-type': 'application/json', 'x-test': 'yes' });
        res.end(JSON.stringify({ method: req.method, path: req.url, body }));
      });
    });
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
    httpBase = `http://127.0.0.1:${(http.address() as { port: number }).port}`;
  });

  afterAll(async () => {
    await env?.close();
    http?.close();
  });

  async function waitFor(id: string, pred: (e: any) => boolean): Promise<any> {
    const end = Date.now() + waitMs;
    for (;;) {
      const { body } = await json(`${base}/executions/${id}`);
      if (pred(body) || Date.now() > end) return body;
      await new Promise((r) => setTimeout(r, 25));
    }
  }

  async function checkRetryChain(flow: { namespace: string; id: string }, firstId: string, want: NonNullable<Expectation['retryChain']>): Promise<void> {
    const list = async () => (await json(`${base}/executions/search?namespace=${flow.namespace}&flowId=${flow.id}&size=100`)).body.results as any[];
    let all = await list();
    for (const end = Date.now() + waitMs; !all.some((e) => e.state.current === want.state) && Date.now() < end;) {
      await new Promise((r) => setTimeout(r, 50));
      all = await list();
    }
    const chain = all.filter((e) => e.originalId === firstId).sort((a, b) => a.metadata.attemptNumber - b.metadata.attemptNumber);
    const states = chain.map((e) => e.state.current);
    expect(states[states.length - 1], `retry chain: ${states.join(', ')}`).toBe(want.state);
    expect(states.slice(0, -1).every((s) => s === 'RETRIED'), `retry chain: ${states.join(', ')}`).toBe(true);
    expect(chain.length, `retry chain: ${states.join(', ')}`).toBeGreaterThanOrEqual(want.minExecutions ?? 1);
    expect(chain.length, `retry chain: ${states.join(', ')}`).toBeLessThanOrEqual(want.maxExecutions);
    expect(chain.map((e) => e.metadata.attemptNumber)).toEqual(chain.map((_e, i) => i + 1));
    expect(new Set(chain.map((e) => e.metadata.originalCreatedDate)).size).toBe(1);
  }

  const subst = (v: unknown): unknown => JSON.parse(JSON.stringify(v ?? {}).replaceAll('$HTTP', httpBase));
  const files = opts.only ? FIXTURES.filter((f) => opts.only!.includes(f)) : FIXTURES;

  const concurrency = opts.concurrency ?? 1;
  const slot = slots(concurrency);
  const test = concurrency > 1 ? it.concurrent : it;
  describe.each(files)('%s', (file) => {
    test(`runs to the expected outcome (${mode})`, () => slot(async () => {
      const docs = parseAllDocuments(readFileSync(join(DIR, file), 'utf8'));
      const sources = docs.map((d) => String(d));
      const expectation = (docs[docs.length - 1]!.toJS() as { expect: Expectation }).expect;
        if (expectation.skip?.includes(mode)) return;
      for (const ns of expectation.namespaces ?? []) {
        const r = await json(`${base}/namespaces/${ns.id}`, { method: 'PUT', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(ns) });
        expect(r.status, JSON.stringify(r.body)).toBe(200);
      }
      const flows = sources.slice(0, -1);
      for (const src of flows.slice().reverse()) {
        const r = await json(`${base}/flows`, { method: 'POST', headers: { 'Content-Type': 'application/x-yaml' }, body: src });
        expect(r.status, JSON.stringify(r.body)).toBeLessThan(300);
      }
      const main = docs[0]!.toJS() as { id: string; namespace: string };
      for (const [path, content] of Object.entries(expectation.namespaceFiles ?? {})) {
        const form = new FormData();
        form.append('fileContent', new Blob([content]), path.split('/').pop()!);
        const r = await fetch(`${base}/namespaces/${main.namespace}/files?path=${encodeURIComponent(path)}`, { method: 'POST', body: form });
        expect(r.status, await r.text()).toBeLessThan(300);
      }
      const labels = Object.entries(expectation.labels ?? {}).map(([k, v]) => `labels=${encodeURIComponent(`${k}:${v}`)}`).join('&');
      const created = await json(`${base}/executions/${main.namespace}/${main.id}${labels ? `?${labels}` : ''}`, {
        method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(subst(expectation.inputs)),
      });
      expect(created.status, JSON.stringify(created.body)).toBe(expectation.status ?? 200);
      if ((expectation.status ?? 200) !== 200) return;
      const id = created.body.id as string;
      if (expectation.kill) {
        await waitFor(id, (e) => e.taskRunList?.some((r: any) => r.state.current === 'RUNNING' && r.attempts?.length));
        expect((await fetch(`${base}/executions/${id}/kill`, { method: 'DELETE' })).status).toBeLessThan(300);
      }
      if (expectation.resume) {
        const paused = await waitFor(id, (e) => e.state.current === 'PAUSED');
        expect(paused.state.current).toBe('PAUSED');
        const body = typeof expectation.resume === 'object' ? JSON.stringify(expectation.resume) : undefined;
        const r = await fetch(`${base}/executions/${id}/resume`, { method: 'POST', ...(body ? { headers: { 'Content-Type': 'application/json' }, body } : {}) });
        expect(r.status).toBeLessThan(300);
      }
      const exec = await waitFor(id, (e) => TERMINAL.includes(e.state.current));
      const summary = exec.taskRunList.map((r: any) => `${r.taskId}${r.value !== undefined ? `(${r.value})` : ''}=${r.state.current}${r.error ? ` [${r.error}]` : ''}`).join(', ');
      expect(exec.state.current, `${summary} ${exec.error ?? ''}`).toBe(expectation.state);
      if (expectation.taskRunCount !== undefined) expect(exec.taskRunList.length, summary).toBe(expectation.taskRunCount);
      for (const [taskId, want] of Object.entries(expectation.taskRuns ?? {})) {
        const runs = exec.taskRunList.filter((r: any) => r.taskId === taskId);
        if (want.count !== undefined) expect(runs.length, `${taskId} runs: ${summary}`).toBe(want.count);
        if (want.state !== undefined) {
          const states = runs.map((r: any) => r.state.current);
          expect(states.length, `${taskId}: ${summary}`).toBeGreaterThan(0);
          for (const s of states) expect([want.state].flat(), `${taskId}: ${summary}`).toContain(s);
        }
        if (want.attempts !== undefined) expect(runs.map((r: any) => r.attempts.length)).toEqual([want.attempts].flat().length === runs.length ? [want.attempts].flat() : runs.map(() => want.attempts));
        if (want.outputs) matchesSubset(runs[0]?.outputs, want.outputs);
        if (want.error !== undefined) expect(String(runs[0]?.error), `${taskId}: ${summary}`).toContain(want.error);
      }
      if (expectation.outputs) matchesSubset(exec.outputs, expectation.outputs);
      for (const text of subst(expectation.absentFromRecord ?? []) as string[]) expect(JSON.stringify(exec)).not.toContain(text);
      if (expectation.retryChain) await checkRetryChain(main, id, expectation.retryChain);
      if (expectation.executionLabels) {
        const got = Object.fromEntries(exec.labels.map((l: any) => [l.key, l.value]));
        matchesSubset(got, expectation.executionLabels);
      }
      if (expectation.logs || expectation.absentFromLogs) {
        // Lines written by another process (the operator, a task Pod) reach the log store asynchronously after the
        // state the test waited for: poll until the expected ones are there (the absent ones are checked after).
        const readLogs = async () => {
          await env.flushLogs();
          return (await json(`${base}/logs/${id}`)).body.map((l: any) => `${l.level} ${l.message}`).join('\n') as string;
        };
        let text = await readLogs();
        for (const end = Date.now() + waitMs; !(expectation.logs ?? []).every((s) => text.includes(s)) && Date.now() < end;) {
          await new Promise((r) => setTimeout(r, 100));
          text = await readLogs();
        }
        for (const s of expectation.logs ?? []) expect(text, text).toContain(s);
        for (const s of expectation.absentFromLogs ?? []) expect(text).not.toContain(s);
      }
    }), waitMs * Math.min(concurrency, 2) + 30_000); // a test also waits for its slot
  });
}
