// Streaming line reading and writing for the row-file tasks (core.storage.Split, FilterItems, DeduplicateItems):
// a file of internal storage is read chunk by chunk, never whole, and a line longer than STORAGE_MAX_ITEM_BYTES is
// refused with the setting's name instead of being buffered without bound.
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { once } from 'node:events';
import { limitError, type Limits } from '../core/limits.js';

/**
 * The lines of a byte stream (split on `\n`, a trailing `\r` removed, as Java's readLine), decoded as UTF-8. The last
 * line needs no terminator; an empty file has no line. `maxLineBytes` bounds what one line may hold in memory.
 */
export async function* readLines(stream: NodeJS.ReadableStream, limits: Pick<Limits, 'storageMaxItemBytes'>, what: string): AsyncGenerator<string> {
  const max = limits.storageMaxItemBytes;
  let parts: Buffer[] = [];
  let held = 0;
  const take = (tail: Buffer): string => {
    const line = parts.length === 0 ? tail : Buffer.concat([...parts, tail]);
    parts = [];
    held = 0;
    const end = line.length > 0 && line[line.length - 1] === 0x0d ? line.length - 1 : line.length;
    return line.toString('utf8', 0, end);
  };
  for await (const raw of stream as AsyncIterable<Buffer | string>) {
    let chunk = typeof raw === 'string' ? Buffer.from(raw) : raw;
    for (let nl = chunk.indexOf(0x0a); nl >= 0; nl = chunk.indexOf(0x0a)) {
      if (held + nl > max) throw limitError('storageMaxItemBytes', `${what}: a line of more than ${max} bytes`, limits as Limits);
      yield take(chunk.subarray(0, nl));
      chunk = chunk.subarray(nl + 1);
    }
    if (chunk.length > 0) {
      held += chunk.length;
      if (held > max) throw limitError('storageMaxItemBytes', `${what}: a line of more than ${max} bytes`, limits as Limits);
      parts.push(Buffer.from(chunk));
    }
  }
  if (held > 0) yield take(Buffer.alloc(0));
}

/** A local file written line by line (or in any pieces of text) with backpressure, then handed to internal storage as a stream. */
export class LineFile {
  private readonly out: WriteStream;
  bytes = 0;
  lines = 0;

  /** `encoding`: how text is written (UTF-8 unless a task's `charset` says otherwise). */
  constructor(readonly path: string, private readonly encoding: BufferEncoding = 'utf8') {
    this.out = createWriteStream(path, { flags: 'wx' });
  }

  /** Text not yet handed to the file: written in pieces of about 64 KiB, not one system call a line. */
  private pending: string[] = [];
  private pendingChars = 0;

  async write(text: string): Promise<void> {
    this.bytes += Buffer.byteLength(text, this.encoding);
    this.lines++;
    this.pending.push(text);
    this.pendingChars += text.length;
    if (this.pendingChars >= 65_536 && !this.out.write(this.takePending())) await once(this.out, 'drain');
  }

  private takePending(): Buffer {
    const data = Buffer.from(this.pending.length === 1 ? this.pending[0] : this.pending.join(''), this.encoding);
    this.pending = [];
    this.pendingChars = 0;
    return data;
  }

  private closing: Promise<unknown> | undefined;

  /** Ends the file (idempotent). */
  async close(): Promise<void> {
    if (!this.closing) {
      this.closing = this.out.closed ? Promise.resolve() : once(this.out, 'close');
      if (this.pending.length > 0 && !this.out.closed) this.out.write(this.takePending());
      this.out.end();
    }
    await this.closing;
  }

  /** The written file as a stream, for `InternalStorage.put`. */
  read(): NodeJS.ReadableStream {
    return createReadStream(this.path);
  }
}
