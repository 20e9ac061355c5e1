// The streamed JSON answers (json-stream.ts): the same text as JSON.stringify, written over many event-loop turns, and
// an execution with thousands of task runs read through the real API as a stream.
import { Readable } from 'node:stream';
import { afterEach, describe, expect, it } from 'vitest';
import type { TaskRun } from '../operator/core/types.js';
import { sampleExecution } from '../operator/store/sqlite/test-fixtures.js';
import { call, startTestApi, type TestApi } from '../test/api/helpers.js';
import { executionJson } from './execution-json.js';
import { jsonBody, jsonBytesBody, STREAM_LIST_FROM } from './json-stream.js';

const run = (i: number): TaskRun => ({
  id: `run${i}`, executionId: 'e1', namespace: 'company.team', flowId: 'hello', taskId: 'r', value: `"${i}"\u2028`,
  state: { current: 'SUCCESS', histories: [{ state: 'SUCCESS', date: '2026-01-01T00:00:00.000Z' }], startDate: '2026-01-01T00:00:00.000Z' },
  attempts: [], outputs: { value: i, nested: { taskRunList: [] } },
} as unknown as TaskRun);

/** The stream's text, and how many turns of the event loop (setImmediate callbacks of another party) ran meanwhile. */
async function drain(stream: Readable): Promise<{ text: string; turns: number }> {
  let turns = 0;
  let done = false;
  const tick = () => { if (!done) { turns++; setImmediate(tick); } };
  setImmediate(tick);
  let text = '';
  for await (const chunk of stream) text += String(chunk);
  done = true;
  return { text, turns };
}

describe('jsonBody', () => {
  it('leaves small lists and values without the list to Koa', () => {
    const small = { a: 1, taskRunList: [run(0)] };
    expect(jsonBody(small, 'taskRunList')).toBe(small);
    const none = { a: 1 } as { a: number; taskRunList?: TaskRun[] };
    expect(jsonBody(none, 'taskRunList')).toBe(none);
  });

  it.each([
    ['list in the middle', (l: TaskRun[]) => ({ id: 'x', taskRunList: l, state: { current: 'SUCCESS' }, gone: undefined })],
    ['list first', (l: TaskRun[]) => ({ taskRunList: l, id: 'x' })],
    ['list last', (l: TaskRun[]) => ({ id: 'x', n: null, taskRunList: l })],
    ['list alone', (l: TaskRun[]) => ({ taskRunList: l })],
  ])('writes the very text of JSON.stringify over many turns (%s)', async (_name, make) => {
    const value = make(Array.from({ length: STREAM_LIST_FROM * 2 + 7 }, (_, i) => run(i)));
    const body = jsonBody(value, 'taskRunList');
    expect(body).toBeInstanceOf(Readable);
    const { text, turns } = await drain(body as Readable);
    expect(text).toBe(JSON.stringify(value));
    // 4,007 items at 500 per slice: 9 slices, each after its own turn but the first.
    expect(turns).toBeGreaterThanOrEqual(8);
  });
});

describe('jsonBytesBody', () => {
  const bytes = async (body: Buffer | Readable): Promise<string> => {
    if (Buffer.isBuffer(body)) return body.toString('utf8');
    const chunks: Buffer[] = [];
    for await (const c of body) chunks.push(c as Buffer);
    return Buffer.concat(chunks).toString('utf8');
  };

  it.each([0, 1, 3, STREAM_LIST_FROM * 2 + 7])('writes the text of JSON.stringify from the items\' joined texts (%i items)', async (n) => {
    const runs = Array.from({ length: n }, (_, i) => run(i));
    for (const make of [(l: TaskRun[]) => ({ id: 'x', taskRunList: l, state: { current: 'SUCCESS' }, gone: undefined }), (l: TaskRun[]) => ({ taskRunList: l })]) {
      const body = jsonBytesBody(make([]), 'taskRunList', Buffer.from(runs.map((r) => JSON.stringify(r)).join(',')));
      expect(await bytes(body)).toBe(JSON.stringify(make(runs)));
    }
  });

  it('non-ASCII texts go through as UTF-8; 8 MiB of items and more are sent as chunks, not copied', async () => {
    const items = Buffer.from(`"é",${JSON.stringify('x'.repeat(8 * 2 ** 20))},"日本"`);
    const body = jsonBytesBody({ a: 1, list: [] as unknown[] }, 'list', items);
    expect(body).toBeInstanceOf(Readable);
    const parsed = JSON.parse(await bytes(body)) as { a: number; list: string[] };
    expect([parsed.a, parsed.list[0], parsed.list[1]!.length, parsed.list[2]]).toEqual([1, 'é', 8 * 2 ** 20, '日本']);
  });
});

describe('GET /api/v1/executions/{id} of a large execution', () => {
  let api: TestApi | undefined;
  afterEach(async () => { await api?.close(); api = undefined; });

  it('answers the whole record as one JSON document (its runs as the store joined them)', async () => {
    api = await startTestApi();
    const runs = Array.from({ length: STREAM_LIST_FROM + 1 }, (_, i) => run(i));
    await api.stores.executions.create({ ...sampleExecution('e1', { state: 'RUNNING' }), taskRunList: runs });
    const r = await call(`${api.url}/api/v1/executions/e1`);
    expect(r.status).toBe(200);
    expect(r.headers.get('content-type')).toContain('application/json');
    expect(Number(r.headers.get('content-length'))).toBeGreaterThan(STREAM_LIST_FROM * 100); // one buffer, under 8 MiB
    expect(r.body.id).toBe('e1');
    expect(r.body.deleted).toBe(false);
    expect(r.body.taskRunList).toEqual(JSON.parse(JSON.stringify(runs)));
  });

  it('answers the very text of the record as the store reads it (runs sent as stored, not parsed), small or large', async () => {
    api = await startTestApi();
    for (const [id, n] of [['none', 0], ['small', 3], ['large', STREAM_LIST_FROM + 5]] as const) {
      await api.stores.executions.create({ ...sampleExecution(id, { state: 'RUNNING' }), taskRunList: Array.from({ length: n }, (_, i) => run(i)) });
      const r = await fetch(`${api.url}/api/v1/executions/${id}`);
      expect(r.status).toBe(200);
      expect(r.headers.get('content-type')).toContain('application/json');
      const { execution } = (await api.stores.executions.get(id))!;
      expect(await r.text()).toBe(JSON.stringify(executionJson(execution)));
    }
    expect((await fetch(`${api.url}/api/v1/executions/nope`)).status).toBe(404);
  });
});
