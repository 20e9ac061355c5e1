// core.http.Request (response status, headers and text body as outputs) and core.http.Download (response
// streamed into internal storage), sent with Node's global fetch and the task's kill signal.
import { Readable, Transform } from 'node:stream';
import type { ReadableStream as WebReadableStream } from 'node:stream/web';
import { definePlugin, p } from './define.js';
import { httpProperties, prepareRequest, responseHeaders, send, statusError } from './http-request.js';
import { failed } from './util.js';

async function readLimited(res: Response, max: number): Promise<Buffer> {
  if (!res.body) return Buffer.alloc(0);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    size += chunk.length;
    if (size > max) throw new Error(`Response exceeds the maximum content length of ${max} bytes (options.maxContentLength)`);
    chunks.push(Buffer.from(chunk));
  }
  return Buffer.concat(chunks);
}

export const httpRequestDefinition = definePlugin({
  type: 'core.http.Request',
  aliases: ['io.kestra.plugin.fs.http.Request'],
  title: 'HTTP request',
  description: 'Sends an HTTP request and returns the response status, headers and body (text, at most options.maxContentLength bytes). A status of 400 or more fails the task unless `allowFailed`.',
  properties: {
    ...httpProperties,
    formData: p.map().describe('Form fields: sent URL-encoded, or as multipart/form-data when `contentType` says so (a kestra:/// URI, or {name, content: URI}, is sent as a file).'),
    allowFailed: p.boolean().describe('Succeed whatever the response status (default: options.allowFailed, else false).'),
  },
  outputs: {
    uri: { type: 'string', description: 'The URL requested.' },
    code: { type: 'integer', description: 'The response status.' },
    headers: { type: 'object', description: 'The response headers (name → list of values).' },
    body: { type: 'string', description: 'The response body as text (absent when empty).' },
  },
  examples: [{ title: 'POST JSON', code: 'id: post\ntype: ai.service.plugin.core.http.Request\nuri: https://example.com/api\nmethod: POST\nbody: \'{"name": "{{ inputs.name }}"}\'\n' }],
  async run(ctx, props) {
    const req = await prepareRequest(ctx, props);
    const res = await send(ctx, req);
    const bytes = await readLimited(res, req.options.maxContentLength);
    if (res.status >= 400 && !req.options.allowFailed) return failed(statusError(res.status));
    const outputs: Record<string, unknown> = { uri: req.url, code: res.status, headers: responseHeaders(res) };
    if (bytes.length > 0) outputs.body = bytes.toString('utf8');
    return { state: 'SUCCESS', outputs };
  },
});

/** File name from a Content-Disposition header (filename= or RFC 5987 filename*=), path parts removed. */
export function filenameFromDisposition(header: string | null): string | undefined {
  if (!header) return undefined;
  let name: string | undefined;
  for (const part of header.split(';').map((p) => p.trim())) {
    if (part.toLowerCase().startsWith('filename*=')) {
      const v = part.slice('filename*='.length);
      const idx = v.indexOf("''");
      name = decodeURIComponent(idx >= 0 ? v.slice(idx + 2) : v);
      break;
    }
    if (part.toLowerCase().startsWith('filename=')) name = part.slice('filename='.length);
  }
  if (name === undefined) return undefined;
  name = name.replace(/^"(.*)"$/, '$1');
  return safeName(name);
}

function safeName(name: string): string | undefined {
  const last = name.split(/[\\/]/).pop() ?? '';
  return last === '' || last === '.' || last === '..' ? undefined : last;
}

export function filenameFromUrl(url: string): string {
  try {
    const segment = new URL(url).pathname.split('/').filter(Boolean).pop();
    return safeName(decodeURIComponent(segment ?? '')) ?? 'download';
  } catch {
    return 'download';
  }
}

function countingStream(): { stream: Transform; size: () => number } {
  let size = 0;
  const stream = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      size += chunk.length;
      cb(null, chunk);
    },
  });
  return { stream, size: () => size };
}

export const httpDownloadDefinition = definePlugin({
  type: 'core.http.Download',
  aliases: ['io.kestra.plugin.fs.http.Download'],
  title: 'HTTP download',
  description: 'Downloads a URL into an internal-storage file, streaming (named after Content-Disposition or the URL). A status of 400 or more fails the task unless options.allowFailed.',
  properties: {
    ...httpProperties,
    failOnEmptyResponse: p.boolean().default(true).describe('Fail when the response is empty.'),
  },
  outputs: {
    uri: { type: 'uri', description: 'The downloaded file.' },
    code: { type: 'integer', description: 'The response status.' },
    length: { type: 'integer', description: 'Its size in bytes.' },
    headers: { type: 'object', description: 'The response headers (name → list of values).' },
  },
  examples: [{ title: 'Download a CSV', code: 'id: download\ntype: ai.service.plugin.core.http.Download\nuri: https://example.com/data.csv\n' }],
  async run(ctx, props) {
    const req = await prepareRequest(ctx, props);
    const failOnEmpty = props.failOnEmptyResponse;
    const res = await send(ctx, req);
    if (res.status >= 400 && !req.options.allowFailed) {
      await res.body?.cancel();
      return failed(statusError(res.status));
    }
    const name = filenameFromDisposition(res.headers.get('content-disposition')) ?? filenameFromUrl(req.url);
    const counter = countingStream();
    const source = res.body ? Readable.fromWeb(res.body as WebReadableStream<Uint8Array>) : Readable.from([]);
    source.on('error', (err) => counter.stream.destroy(err));
    const uri = await ctx.storage.put(`${ctx.storagePrefix}/${encodeURIComponent(name)}`, source.pipe(counter.stream));
    const length = counter.size();
    const expected = res.headers.get('content-length');
    if (expected !== null && res.body && Number(expected) !== length) {
      throw new Error(`Invalid size, got ${length}, expected ${expected}`);
    }
    if (length === 0) {
      if (failOnEmpty && !req.options.allowFailed) return failed('No response from server');
      ctx.logger.warn(`File '${req.url}' is empty`);
    }
    ctx.logger.debug(`File '${req.url}' downloaded with size '${length}'`);
    return { state: 'SUCCESS', outputs: { uri, code: res.status, length, headers: responseHeaders(res) } };
  },
});

export const httpRequestPlugin = httpRequestDefinition.runnable;
export const httpDownloadPlugin = httpDownloadDefinition.runnable;
