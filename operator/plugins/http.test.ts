// Tests of core.http.Request and core.http.Download against a real node:http server on port 0.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { filenameFromDisposition, filenameFromUrl, httpDownloadPlugin, httpRequestPlugin } from './http.js';
import { makeTestContext, type TestContext } from './testing.js';

interface Seen { method?: string; url?: string; headers: IncomingMessage['headers']; body: string }
let server: Server;
let base = '';
let last: Seen = { headers: {}, body: '' };

function route(req: IncomingMessage, res: ServerResponse, body: string): void {
  last = { method: req.method, url: req.url, headers: req.headers, body };
  const url = new URL(req.url ?? '/', base);
  if (url.pathname === '/json') {
    res.setHeader('content-type', 'application/json');
    res.setHeader('set-cookie', ['a=1', 'b=2']);
    res.end(JSON.stringify({ ok: true }));
  } else if (url.pathname === '/echo') {
    res.setHeader('content-type', 'text/plain');
    res.end(body);
  } else if (url.pathname === '/missing') {
    res.statusCode = 404;
    res.end('not here');
  } else if (url.pathname === '/files/report.csv') {
    res.end('a,b\n1,2\n');
  } else if (url.pathname === '/attachment') {
    res.setHeader('content-disposition', 'attachment; filename="data.txt"');
    res.end('content');
  } else if (url.pathname === '/hostile-headers') {
    res.setHeader('__proto__', 'p');
    res.setHeader('constructor', 'c');
    res.end('x');
  } else if (url.pathname === '/empty') {
    res.end();
  } else if (url.pathname === '/slow') {
    setTimeout(() => res.end('late'), 5000).unref();
  } else {
    res.statusCode = 500;
    res.end();
  }
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => route(req, res, Buffer.concat(chunks).toString('utf8')));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

let t: TestContext | undefined;
afterEach(async () => { await t?.cleanup(); t = undefined; });

function ctx(props: Record<string, unknown>, type = httpRequestPlugin.type): TestContext {
  t = makeTestContext({ task: { id: 'req', type, ...props }, variables: { vars: { base } } });
  return t;
}

describe('core.http.Request', () => {
  it('GETs and returns code, lower-case headers as lists, text body and uri; logs the request at DEBUG', async () => {
    const c = ctx({ uri: '{{ vars.base }}/json' });
    const r = await httpRequestPlugin.run(c.ctx);
    expect(r.state).toBe('SUCCESS');
    expect(r.outputs?.code).toBe(200);
    expect(r.outputs?.body).toBe('{"ok":true}');
    expect(r.outputs?.uri).toBe(`${base}/json`);
    const headers = r.outputs?.headers as Record<string, string[]>;
    expect(headers['content-type']).toEqual(['application/json']);
    expect(headers['set-cookie']).toEqual(['a=1', 'b=2']);
    expect(c.messages('DEBUG')).toContain(`Request 'GET ${base}/json'`);
  });

  it('keeps response headers named `__proto__` or `constructor` as ordinary keys', async () => {
    const r = await httpRequestPlugin.run(ctx({ uri: `${base}/hostile-headers` }).ctx);
    const headers = r.outputs?.headers as Record<string, string[]>;
    expect(Object.getPrototypeOf(headers)).toBeNull();
    expect(Object.keys(headers)).toEqual(expect.arrayContaining(['__proto__', 'constructor']));
    expect([headers.__proto__, headers.constructor]).toEqual([['p'], ['c']]);
  });

  it('POSTs a map body as JSON with custom headers', async () => {
    const c = ctx({ uri: `${base}/echo`, method: 'POST', body: { name: '{{ flow.id }}' }, headers: { 'X-Test': 'yes' } });
    const r = await httpRequestPlugin.run(c.ctx);
    expect(r.outputs?.body).toBe('{"name":"flow1"}');
    expect(last.method).toBe('POST');
    expect(last.headers['content-type']).toBe('application/json');
    expect(last.headers['x-test']).toBe('yes');
  });

  it('sends formData url-encoded, or as multipart with a storage file', async () => {
    const c = ctx({ uri: `${base}/echo`, method: 'POST', formData: { user: 'John Doe', n: 1 } });
    await httpRequestPlugin.run(c.ctx);
    expect(last.body).toBe('user=John+Doe&n=1');
    expect(last.headers['content-type']).toContain('application/x-www-form-urlencoded');
    const uri = await c.stores.storage.put('company/team/flow1/executions/exec1/inputs/f/up.txt', Buffer.from('file body'));
    c.ctx.task = { ...c.ctx.task, contentType: 'multipart/form-data', formData: { user: 'x', file: uri } };
    await httpRequestPlugin.run(c.ctx);
    expect(last.headers['content-type']).toContain('multipart/form-data');
    expect(last.body).toContain('filename="up.txt"');
    expect(last.body).toContain('file body');
  });

  it('fails on a status >= 400 unless allowFailed', async () => {
    const c = ctx({ uri: `${base}/missing` });
    expect(await httpRequestPlugin.run(c.ctx)).toEqual({ state: 'FAILED', error: "Failed http request with response code '404'" });
    c.ctx.task = { ...c.ctx.task, options: { allowFailed: true } };
    const r = await httpRequestPlugin.run(c.ctx);
    expect(r.state).toBe('SUCCESS');
    expect(r.outputs?.code).toBe(404);
    expect(r.outputs?.body).toBe('not here');
  });

  it('fails on options.timeout, and stops promptly on kill', async () => {
    const c = ctx({ uri: `${base}/slow`, options: { timeout: 'PT0.2S' } });
    const r = await httpRequestPlugin.run(c.ctx);
    expect(r.state).toBe('FAILED');
    expect(r.error).toContain('timed out');
    c.ctx.task = { ...c.ctx.task, options: {} };
    const pending = httpRequestPlugin.run(c.ctx);
    c.controller.abort();
    expect(await pending).toEqual({ state: 'FAILED', error: 'Task killed' });
  });

  it('reports a connection failure', async () => {
    const c = ctx({ uri: 'http://127.0.0.1:1/nothing' });
    const r = await httpRequestPlugin.run(c.ctx);
    expect(r.state).toBe('FAILED');
    expect(r.error).toContain("Request 'GET http://127.0.0.1:1/nothing' failed");
  });
});

describe('core.http.Download', () => {
  it('streams the body into internal storage, named after the URL', async () => {
    const c = ctx({ uri: `${base}/files/report.csv` }, httpDownloadPlugin.type);
    const r = await httpDownloadPlugin.run(c.ctx);
    expect(r.state).toBe('SUCCESS');
    expect(r.outputs?.code).toBe(200);
    expect(r.outputs?.length).toBe(8);
    const uri = r.outputs?.uri as string;
    expect(uri).toBe(`kestra:///company/team/flow1/executions/exec1/tasks/req/tr1/report.csv`);
    expect((await c.stores.storage.get(uri)).toString()).toBe('a,b\n1,2\n');
  });

  it('names the file from content-disposition', async () => {
    const c = ctx({ uri: `${base}/attachment` }, httpDownloadPlugin.type);
    const r = await httpDownloadPlugin.run(c.ctx);
    expect(String(r.outputs?.uri).endsWith('/data.txt')).toBe(true);
  });

  it('fails on an empty response unless failOnEmptyResponse is false', async () => {
    const c = ctx({ uri: `${base}/empty` }, httpDownloadPlugin.type);
    expect((await httpDownloadPlugin.run(c.ctx)).error).toBe('No response from server');
    c.ctx.task = { ...c.ctx.task, failOnEmptyResponse: false };
    const r = await httpDownloadPlugin.run(c.ctx);
    expect(r.state).toBe('SUCCESS');
    expect(r.outputs?.length).toBe(0);
  });

  it('fails on 404', async () => {
    const c = ctx({ uri: `${base}/missing` }, httpDownloadPlugin.type);
    expect((await httpDownloadPlugin.run(c.ctx)).error).toBe("Failed http request with response code '404'");
  });
});

describe('file names', () => {
  it.each([
    ['attachment; filename="a b.csv"', 'a b.csv'],
    ["attachment; filename*=UTF-8''r%C3%A9sum%C3%A9.pdf", 'résumé.pdf'],
    ['attachment; filename="../../etc/passwd"', 'passwd'],
    ['inline', undefined],
  ])('%s → %s', (header, name) => {
    expect(filenameFromDisposition(header)).toBe(name);
  });

  it('falls back to the last URL segment', () => {
    expect(filenameFromUrl('http://x/a/b/c.json?x=1')).toBe('c.json');
    expect(filenameFromUrl('http://x/')).toBe('download');
  });
});
