// Tests of the core.storage file tasks (Write, Concat, Split, Size, Delete) against the real local internal storage,
// through the task's scoped storage view (operator/tenancy).
import { afterEach, describe, expect, it } from 'vitest';
import { storageConcatPlugin, storageDeletePlugin, storagePurgePlugin, storageSizePlugin, storageSplitPlugin, storageWritePlugin } from './storage.js';
import { makeTestContext, type TestContext } from './testing.js';

let t: TestContext | undefined;
afterEach(async () => { await t?.cleanup(); t = undefined; delete process.env.STORAGE_MAX_PURGE_FILES; delete process.env.STORAGE_MAX_SPLIT_FILES; delete process.env.STORAGE_MAX_ITEM_BYTES; });

const OWN = 'company/team/flow1/executions/exec1';
const put = (path: string, text: string) => t!.stores.storage.put(`${OWN}/${path}`, Buffer.from(text));
const text = async (uri: unknown) => (await t!.stores.storage.get(uri as string)).toString();

it('Write: writes rendered content and returns its uri', async () => {
  t = makeTestContext({ task: { id: 'w', type: storageWritePlugin.type, content: 'id={{ execution.id }}', extension: 'txt' } });
  const r = await storageWritePlugin.run(t.ctx);
  const uri = r.outputs?.uri as string;
  expect(uri).toMatch(/^kestra:\/\/\/company\/team\/flow1\/executions\/exec1\/tasks\/w\/tr1\/[0-9a-f-]+\.txt$/);
  expect((await t.stores.storage.get(uri)).toString()).toBe('id=exec1');
});

describe('Concat', () => {
  it('joins files in order with the separator after each, from a list or a JSON text', async () => {
    t = makeTestContext({ task: { id: 'c', type: storageConcatPlugin.type, files: [], separator: '|' } });
    const a = await put('a.txt', 'A');
    const b = await put('b.txt', 'B');
    t.ctx.task.files = [a, '{{ vars.b }}'];
    t.ctx.variables.vars = { b };
    const r = await storageConcatPlugin.run(t.ctx);
    expect(r.state).toBe('SUCCESS');
    expect(r.outputs?.uri).toMatch(/\/tasks\/c\/tr1\/[0-9a-f-]+\.tmp$/);
    expect(await text(r.outputs?.uri)).toBe('A|B|');
    t.ctx.task = { id: 'c', type: storageConcatPlugin.type, files: JSON.stringify([b, a]), extension: 'csv' };
    const r2 = await storageConcatPlugin.run(t.ctx);
    expect(r2.outputs?.uri).toMatch(/\.csv$/);
    expect(await text(r2.outputs?.uri)).toBe('BA');
  });

  it("refuses another tenant's file", async () => {
    t = makeTestContext({ task: { id: 'c', type: storageConcatPlugin.type, files: ['kestra:///victim/ns/f/executions/v1/tasks/x/y/secret.txt'] } });
    await t.stores.storage.put('victim/ns/f/executions/v1/tasks/x/y/secret.txt', Buffer.from('s3cret'));
    const r = await storageConcatPlugin.run(t.ctx);
    expect(r.state).toBe('FAILED');
    expect(r.error).toMatch(/is not allowed.*victim\.ns/);
  });
});

describe('Split', () => {
  const split = async (props: Record<string, unknown>, content: string) => {
    t = makeTestContext({ task: { id: 's', type: storageSplitPlugin.type, from: '', ...props } });
    t.ctx.task.from = await put('in.csv', content);
    const r = await storageSplitPlugin.run(t.ctx);
    return { r, parts: r.state === 'SUCCESS' ? await Promise.all((r.outputs?.uris as string[]).map(text)) : [] };
  };

  it('rows: consecutive pieces of at most n rows, keeping the extension', async () => {
    const { r, parts } = await split({ rows: 2 }, 'a\nb\nc\nd\ne');
    expect(parts).toEqual(['a\nb\n', 'c\nd\n', 'e\n']);
    expect((r.outputs?.uris as string[])[0]).toMatch(/\/tasks\/s\/tr1\/[0-9a-f-]+\.csv$/);
  });

  it('bytes: a new piece once the current one reached the size; custom separator', async () => {
    const { parts } = await split({ bytes: '4B', separator: ';' }, 'aa\nbb\ncc\r\ndd\n');
    expect(parts).toEqual(['aa;bb;', 'cc;dd;']);
  });

  it('partitions: rows dealt round-robin, empty partitions dropped', async () => {
    expect((await split({ partitions: 2 }, '1\n2\n3\n4\n5\n')).parts).toEqual(['1\n3\n5\n', '2\n4\n']);
    expect((await split({ partitions: 5 }, '1\n2\n')).parts).toEqual(['1\n', '2\n']);
  });

  it('refuses zero or two modes, and regexPattern (not built)', async () => {
    expect((await split({}, 'a')).r.error).toMatch(/exactly one of 'bytes', 'rows' or 'partitions'/);
    expect((await split({ rows: 1, bytes: '1KB' }, 'a')).r.error).toMatch(/got rows, bytes|got bytes, rows/);
    expect((await split({ regexPattern: '(a)' }, 'a')).r.error).toMatch(/regexPattern/);
  });

  it('stops at STORAGE_MAX_SPLIT_FILES and at STORAGE_MAX_ITEM_BYTES, naming the setting', async () => {
    process.env.STORAGE_MAX_SPLIT_FILES = '2';
    expect((await split({ rows: 1 }, 'a\nb\nc\n')).r.error).toMatch(/STORAGE_MAX_SPLIT_FILES/);
    expect((await split({ partitions: 3 }, 'a\nb\nc\n')).r.error).toMatch(/STORAGE_MAX_SPLIT_FILES/);
    delete process.env.STORAGE_MAX_SPLIT_FILES;
    process.env.STORAGE_MAX_ITEM_BYTES = '1024';
    expect((await split({ rows: 1 }, `short\n${'x'.repeat(5000)}\n`)).r.error).toMatch(/STORAGE_MAX_ITEM_BYTES/);
  });

  it('streams a file larger than one read chunk without losing lines', async () => {
    const lines = Array.from({ length: 50_000 }, (_, i) => `row-${i}-${'y'.repeat(20)}`);
    const { parts } = await split({ rows: 20_000 }, lines.join('\n') + '\n');
    expect(parts.length).toBe(3);
    expect(parts.join('')).toBe(lines.join('\n') + '\n');
  });
});

describe('Size and Delete', () => {
  it('Size gives the byte size; Delete removes an own file and reports deleted', async () => {
    t = makeTestContext({ task: { id: 'z', type: storageSizePlugin.type, uri: '' } });
    const uri = await put('tasks/x/y/f.txt', 'héllo');
    t.ctx.task.uri = uri;
    expect((await storageSizePlugin.run(t.ctx)).outputs).toEqual({ size: 6 });
    t.ctx.task = { id: 'd', type: storageDeletePlugin.type, uri };
    expect((await storageDeletePlugin.run(t.ctx)).outputs).toEqual({ uri, deleted: true });
    expect(await t.stores.storage.exists(uri)).toBe(false);
    expect((await storageDeletePlugin.run(t.ctx)).outputs).toEqual({ uri, deleted: false });
    t.ctx.task.errorOnMissing = true;
    expect((await storageDeletePlugin.run(t.ctx)).error).toMatch(/Unable to find file/);
  });

  it("Delete refuses a file outside the execution's folder, even of its namespace", async () => {
    t = makeTestContext({ task: { id: 'd', type: storageDeletePlugin.type, uri: 'kestra:///company/team/other/executions/e2/tasks/a/b/f.txt' } });
    await t.stores.storage.put('company/team/other/executions/e2/tasks/a/b/f.txt', Buffer.from('keep'));
    const r = await storageDeletePlugin.run(t.ctx);
    expect(r.error).toMatch(/Writing .* is not allowed/);
    expect(await t.stores.storage.exists('kestra:///company/team/other/executions/e2/tasks/a/b/f.txt')).toBe(true);
  });
});

describe('PurgeCurrentExecutionFiles', () => {
  it("deletes every file of its own execution's folder, lists them as `uris`, and leaves other executions' files", async () => {
    t = makeTestContext({ task: { id: 'p', type: storagePurgePlugin.type } });
    const a = await put('inputs/f/in.txt', 'in');
    const b = await put('tasks/w/tr0/out file.txt', 'out');
    const other = await t.stores.storage.put('company/team/flow1/executions/exec2/tasks/w/tr0/keep.txt', Buffer.from('k'));
    const attempt = await put('_attempts/tr0/1/result.json', '{}'); // the service's channel (cluster mode), not the execution's
    const r = await storagePurgePlugin.run(t.ctx);
    expect(r).toEqual({ state: 'SUCCESS', outputs: { uris: [a, b].sort() } });
    expect(await t.stores.storage.exists(a)).toBe(false);
    expect(await t.stores.storage.exists(b)).toBe(false);
    expect(await t.stores.storage.exists(other)).toBe(true);
    expect(await t.stores.storage.exists(attempt)).toBe(true);
    expect((await storagePurgePlugin.run(t.ctx)).outputs).toEqual({ uris: [] }); // nothing left: no error
  });

  it('fails before deleting anything beyond STORAGE_MAX_PURGE_FILES, naming it', async () => {
    process.env.STORAGE_MAX_PURGE_FILES = '2';
    t = makeTestContext({ task: { id: 'p', type: storagePurgePlugin.type } });
    const files = await Promise.all(['1', '2', '3'].map((n) => put(`tasks/w/tr0/${n}.txt`, n)));
    const r = await storagePurgePlugin.run(t.ctx);
    expect(r.state).toBe('FAILED');
    expect(r.error).toContain('STORAGE_MAX_PURGE_FILES');
    for (const f of files) expect(await t.stores.storage.exists(f)).toBe(true);
  });

  it("the task's storage view lists and deletes folders only inside its own execution's", async () => {
    t = makeTestContext({ task: { id: 'p', type: storagePurgePlugin.type } });
    const tree = t.ctx.storage.tree!;
    const boom = () => new Error('too many');
    await expect(tree.list('company/team/flow1/executions/exec2', 10, boom)).rejects.toThrow(/only inside its execution's folder/);
    await expect(tree.list('company/team/flow1/executions', 10, boom)).rejects.toThrow(/only inside its execution's folder/);
    await expect(t.ctx.storage.deleteTree('company/team/flow1')).rejects.toThrow(/only inside its execution's folder/);
    await expect(t.ctx.storage.deleteTree('kestra:///company/team/flow1/executions/exec1/../exec2')).rejects.toThrow();
  });
});
