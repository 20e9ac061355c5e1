// Kestra's ION row files, read and written as a stream: one Amazon Ion text value a line (Kestra's FileSerde). The
// reader takes full Ion text (unquoted symbols, timestamps, decimals, blobs, annotations, comments; JSON is Ion too);
// the writer writes JSON where the value is JSON and Ion only where JSON has no form (timestamps, blobs, nan/inf,
// decimals beyond a double), so the rows stay readable by JSON tools. A line is at most STORAGE_MAX_ITEM_BYTES.
import { randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import type { Limits } from '../core/limits.js';
import { LineFile, readLines } from './lines.js';

/** An Ion timestamp, kept as its text (`2024-01-31`, `2024-01-31T10:00:00.000Z`): its precision is part of it. */
export class IonTimestamp {
  constructor(readonly text: string) {}
  /** Date precision only (`2024-01-31`, `2024-01T`, `2024T`): Kestra's LocalDate. */
  get dateOnly(): boolean { return !this.text.includes(':'); }
  /** Has an offset (Kestra's Instant/OffsetDateTime); `-00:00` (unknown offset) counts as none. */
  get hasOffset(): boolean { return /(Z|[+-]\d\d:\d\d)$/.test(this.text) && !this.text.endsWith('-00:00') && !this.dateOnly; }
  toDate(): Date {
    const t = this.text.replace(/T$/, '');
    const full = t.length === 4 ? `${t}-01-01` : t.length === 7 ? `${t}-01` : t;
    return new Date(this.dateOnly ? `${full}T00:00:00Z` : full.replace(/-00:00$/, 'Z'));
  }
  toJSON(): string { return this.text; }
  toString(): string { return this.text; }
}

/** An Ion decimal whose digits a double cannot hold exactly (Kestra's BigDecimal), kept as text (`1234567890123456789.01`). */
export class IonDecimal {
  constructor(readonly text: string) {}
  toJSON(): string { return this.text; }
  toString(): string { return this.text; }
}

export class IonSyntaxError extends Error {}

const dict = (): Record<string, unknown> => Object.create(null) as Record<string, unknown>;

/** How read values look: `typed` keeps timestamps, exact decimals and blobs as such; `plain` gives JSON-like values (timestamps and big decimals as text, blobs as base64). */
export type IonMode = 'typed' | 'plain';

const MAX_DEPTH = 200;
const isDigit = (c: number): boolean => c >= 48 && c <= 57;
const isIdentStart = (c: number): boolean => (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c === 95 || c === 36;
const isIdent = (c: number): boolean => isIdentStart(c) || isDigit(c);
const OPERATOR = '!#%&*+-./;<=>?@^`|~';
const TIMESTAMP = /^\d{4}(T|-\d\d(T|-\d\d(T(\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d))?)?)?)$/;

class Parser {
  i = 0;
  constructor(readonly s: string, readonly mode: IonMode) {}

  fail(what: string): never {
    throw new IonSyntaxError(`${what} at column ${this.i + 1}`);
  }

  skip(): void {
    const s = this.s;
    for (;;) {
      const c = s.charCodeAt(this.i);
      if (c === 32 || c === 9 || c === 10 || c === 13 || c === 11 || c === 12) this.i++;
      else if (c === 47 && s.charCodeAt(this.i + 1) === 47) this.i = s.length;
      else if (c === 47 && s.charCodeAt(this.i + 1) === 42) {
        const end = s.indexOf('*/', this.i + 2);
        if (end < 0) this.fail('Unterminated comment');
        this.i = end + 2;
      } else return;
    }
  }

  atEnd(): boolean {
    this.skip();
    return this.i >= this.s.length;
  }

  value(depth: number): unknown {
    if (depth > MAX_DEPTH) this.fail(`Values nested deeper than ${MAX_DEPTH}`);
    this.skip();
    const s = this.s;
    const c = s.charCodeAt(this.i);
    if (c === 123) {
      if (s.charCodeAt(this.i + 1) === 123) return this.lob();
      return this.struct(depth);
    }
    if (c === 91) return this.sequence(depth, 93);
    if (c === 40) return this.sequence(depth, 41);
    if (c === 34) {
      const text = this.shortString();
      return this.annotated(text, depth);
    }
    if (c === 39) {
      if (s.startsWith("'''", this.i)) return this.longStrings();
      const sym = this.quotedSymbol();
      return this.annotated(sym, depth);
    }
    if (isDigit(c) || (c === 45 && isDigit(s.charCodeAt(this.i + 1))) || s.startsWith('+inf', this.i) || s.startsWith('-inf', this.i)) return this.numberOrTimestamp();
    if (isIdentStart(c)) {
      const start = this.i;
      while (this.i < s.length && isIdent(s.charCodeAt(this.i))) this.i++;
      const word = s.slice(start, this.i);
      const annotated = this.annotated(word, depth);
      if (annotated !== word) return annotated;
      if (word === 'null') {
        if (s.charCodeAt(this.i) === 46) { // null.int, null.struct...
          this.i++;
          while (this.i < s.length && isIdent(s.charCodeAt(this.i))) this.i++;
        }
        return null;
      }
      if (word === 'true') return true;
      if (word === 'false') return false;
      if (word === 'nan') return NaN;
      return word;
    }
    if (this.i >= s.length) this.fail('Unexpected end of value');
    if (OPERATOR.includes(s[this.i])) {
      const start = this.i;
      while (this.i < s.length && OPERATOR.includes(s[this.i])) this.i++;
      return s.slice(start, this.i);
    }
    this.fail(`Unexpected character '${s[this.i]}'`);
  }

  /** After a symbol or string: `sym::value` is an annotation (dropped, as Kestra's reader does); else the text itself. */
  annotated(text: string, depth: number): unknown {
    const save = this.i;
    this.skip();
    if (this.s.charCodeAt(this.i) === 58 && this.s.charCodeAt(this.i + 1) === 58) {
      this.i += 2;
      return this.value(depth);
    }
    this.i = save;
    return text;
  }

  struct(depth: number): Record<string, unknown> {
    const out = dict();
    this.i++;
    for (;;) {
      this.skip();
      const c = this.s.charCodeAt(this.i);
      if (c === 125) { this.i++; return out; }
      let key: string;
      if (c === 34) key = this.shortString();
      else if (c === 39) key = this.s.startsWith("'''", this.i) ? this.longStrings() : this.quotedSymbol();
      else if (isIdentStart(c)) {
        const start = this.i;
        while (this.i < this.s.length && isIdent(this.s.charCodeAt(this.i))) this.i++;
        key = this.s.slice(start, this.i);
      } else this.fail('Expected a field name');
      this.skip();
      if (this.s.charCodeAt(this.i) !== 58) this.fail('Expected \':\' after a field name');
      this.i++;
      out[key] = this.value(depth + 1);
      this.skip();
      const d = this.s.charCodeAt(this.i);
      if (d === 44) this.i++;
      else if (d !== 125) this.fail('Expected \',\' or \'}\' in a struct');
    }
  }

  sequence(depth: number, close: number): unknown[] {
    const out: unknown[] = [];
    this.i++;
    for (;;) {
      this.skip();
      const c = this.s.charCodeAt(this.i);
      if (c === close) { this.i++; return out; }
      if (this.i >= this.s.length) this.fail('Unterminated list');
      out.push(this.value(depth + 1));
      this.skip();
      if (close === 93) {
        const d = this.s.charCodeAt(this.i);
        if (d === 44) this.i++;
        else if (d !== 93) this.fail('Expected \',\' or \']\' in a list');
      }
    }
  }

  escape(): string {
    const s = this.s;
    const c = s[this.i++];
    switch (c) {
      case 'n': return '\n';
      case 't': return '\t';
      case 'r': return '\r';
      case '0': return '\0';
      case 'a': return '\x07';
      case 'b': return '\b';
      case 'f': return '\f';
      case 'v': return '\v';
      case '"': case "'": case '\\': case '/': case '?': return c;
      case '\n': return '';
      case 'x': case 'u': case 'U': {
        const len = c === 'x' ? 2 : c === 'u' ? 4 : 8;
        const hex = s.slice(this.i, this.i + len);
        if (!/^[0-9a-fA-F]+$/.test(hex) || hex.length !== len) this.fail('Bad escape');
        this.i += len;
        return String.fromCodePoint(parseInt(hex, 16));
      }
      default: return this.fail('Bad escape');
    }
  }

  quotedText(quote: number): string {
    const s = this.s;
    let out = '';
    let start = this.i;
    for (;;) {
      if (this.i >= s.length) this.fail('Unterminated string');
      const c = s.charCodeAt(this.i);
      if (c === quote) {
        out += s.slice(start, this.i);
        this.i++;
        return out;
      }
      if (c === 92) {
        out += s.slice(start, this.i);
        this.i++;
        out += this.escape();
        start = this.i;
      } else this.i++;
    }
  }

  shortString(): string {
    this.i++;
    return this.quotedText(34);
  }

  quotedSymbol(): string {
    this.i++;
    return this.quotedText(39);
  }

  /** `'''a''' '''b'''`: long strings, concatenated. */
  longStrings(): string {
    let out = '';
    while (this.s.startsWith("'''", this.i)) {
      this.i += 3;
      const s = this.s;
      let start = this.i;
      for (;;) {
        if (this.i >= s.length) this.fail('Unterminated long string');
        if (s.startsWith("'''", this.i)) { out += s.slice(start, this.i); this.i += 3; break; }
        if (s.charCodeAt(this.i) === 92) { out += s.slice(start, this.i); this.i++; out += this.escape(); start = this.i; } else this.i++;
      }
      const save = this.i;
      this.skip();
      if (!this.s.startsWith("'''", this.i)) { this.i = save; break; }
    }
    return out;
  }

  lob(): unknown {
    const end = this.s.indexOf('}}', this.i + 2);
    if (end < 0) this.fail('Unterminated blob');
    const body = this.s.slice(this.i + 2, end).trim();
    this.i += 2;
    if (body.startsWith('"') || body.startsWith("'''")) { // clob: text
      this.skip();
      const text = this.s.startsWith("'''", this.i) ? this.longStrings() : this.shortString();
      this.skip();
      if (!this.s.startsWith('}}', this.i)) this.fail('Unterminated clob');
      this.i += 2;
      return text;
    }
    this.i = end + 2;
    const compact = body.replace(/\s+/g, '');
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(compact)) this.fail('Bad base64 in a blob');
    return this.mode === 'plain' ? compact : Buffer.from(compact, 'base64');
  }

  numberOrTimestamp(): unknown {
    const s = this.s;
    const start = this.i;
    if (s.startsWith('+inf', start)) { this.i += 4; return Infinity; }
    if (s.startsWith('-inf', start)) { this.i += 4; return -Infinity; }
    while (this.i < s.length && /[0-9a-zA-Z_.:+\-]/.test(s[this.i])) this.i++;
    const text = s.slice(start, this.i);
    if (/^\d{4}(-|T)/.test(text) || /^\d{4}$/.test(text) && s[this.i] === 'T') {
      if (!TIMESTAMP.test(text)) this.fail(`Bad timestamp '${text}'`);
      return this.mode === 'plain' ? text : new IonTimestamp(text);
    }
    if (/^-?0[xX][0-9a-fA-F_]+$/.test(text) || /^-?0[bB][01_]+$/.test(text)) {
      const neg = text.startsWith('-');
      const n = Number(text.replace(/_/g, '').replace(/^-/, ''));
      return neg ? -n : n;
    }
    const clean = text.replace(/_/g, '');
    if (/^-?\d+$/.test(clean)) {
      const n = Number(clean);
      return Number.isSafeInteger(n) ? n : this.decimal(clean);
    }
    if (/^-?\d+(\.\d*)?([dD][+-]?\d+)?$/.test(clean)) return this.decimal(clean.replace(/[dD]/, 'e'));
    if (/^-?\d+(\.\d*)?[eE][+-]?\d+$/.test(clean)) return Number(clean);
    this.fail(`Bad number '${text}'`);
  }

  /** A decimal as a number when a double holds its digits, otherwise (typed mode) as IonDecimal. */
  decimal(text: string): unknown {
    const digits = text.replace(/^-/, '').replace(/[eE].*$/, '').replace('.', '').replace(/^0+/, '').replace(/0+$/, '');
    const n = Number(text);
    if (digits.length <= 15) return n;
    return this.mode === 'plain' ? n : new IonDecimal(text);
  }
}

/** Parses one Ion text value (the whole of `text`, surrounding whitespace and comments allowed). */
export function parseIon(text: string, mode: IonMode = 'typed'): unknown {
  const values = parseIonValues(text, mode);
  if (values.length !== 1) throw new IonSyntaxError(`Expected one Ion value, got ${values.length}`);
  return values[0];
}

/** Every top-level Ion value of `text` (a row line holds one; Ion allows several). */
export function parseIonValues(text: string, mode: IonMode = 'typed'): unknown[] {
  const c = text.charCodeAt(0);
  if (c === 123 && text.charCodeAt(1) === 34) { // the JSON rows this writer writes: JSON.parse is several times faster
    // Typed rows go to converters that read own keys only (Object.keys, Object.hasOwn): JSON.parse's objects are safe
    // there (a `__proto__` key is an own key); plain rows become expression variables: prototype-free objects.
    try { return [mode === 'typed' ? JSON.parse(text) : plainJson(text)]; } catch { /* Ion after all */ }
  }
  const p = new Parser(text, mode);
  const out: unknown[] = [];
  while (!p.atEnd()) {
    const v = p.value(0);
    out.push(v);
    p.skip();
    if (p.s.charCodeAt(p.i) === 44) p.fail('Unexpected \',\' between top-level values');
  }
  return out;
}

function plainJson(text: string): unknown {
  return JSON.parse(text, (_key, value: unknown) => {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
    const out = dict();
    for (const k of Object.keys(value)) out[k] = (value as Record<string, unknown>)[k];
    return out;
  });
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Ion text of a value, on one line: JSON where the value has a JSON form. */
export function ionText(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  switch (typeof value) {
    case 'string': return JSON.stringify(value);
    case 'boolean': return value ? 'true' : 'false';
    case 'bigint': return value.toString();
    case 'number':
      if (Number.isNaN(value)) return 'nan';
      if (!Number.isFinite(value)) return value > 0 ? '+inf' : '-inf';
      return String(value);
    case 'object': break;
    default: return JSON.stringify(String(value));
  }
  if (value instanceof IonTimestamp || value instanceof IonDecimal) return value.text;
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? 'null' : value.toISOString();
  if (value instanceof Uint8Array) return `{{${Buffer.from(value.buffer, value.byteOffset, value.byteLength).toString('base64')}}}`;
  if (Array.isArray(value)) {
    let out = '[';
    for (let k = 0; k < value.length; k++) out += (k ? ',' : '') + ionText(value[k]);
    return out + ']';
  }
  if (value instanceof Map) return ionText(Object.fromEntries(value));
  let out = '{';
  let first = true;
  for (const k of Object.keys(value)) {
    const v = (value as Record<string, unknown>)[k];
    if (v === undefined) continue;
    out += (first ? '' : ',') + JSON.stringify(k) + ':' + ionText(v);
    first = false;
  }
  return out + '}';
}

/**
 * The rows of an ION file, one value at a time: a line is read, never the file, and a line longer than
 * STORAGE_MAX_ITEM_BYTES is refused naming the setting. A malformed line fails naming its line number.
 */
export async function* readIonRows(stream: NodeJS.ReadableStream, limits: Pick<Limits, 'storageMaxItemBytes'>, what: string, mode: IonMode = 'typed'): AsyncGenerator<unknown> {
  let line = 0;
  for await (const text of readLines(stream, limits, what)) {
    line++;
    let values: unknown[];
    try {
      values = parseIonValues(text, mode);
    } catch (err) {
      throw new Error(`${what}: line ${line} is not an Ion value: ${(err as Error).message}`);
    }
    yield* values;
  }
}

/** Rows written one a line to a local file of the working directory, then stored as an `.ion` file. */
export class IonRowWriter {
  private readonly file: LineFile;
  rows = 0;

  constructor(workingDir: string) {
    this.file = new LineFile(join(workingDir, `rows-${randomUUID()}.ion`));
  }

  async write(row: unknown): Promise<void> {
    this.rows++;
    await this.file.write(ionText(row) + '\n');
  }

  /** Ends the file and puts it into internal storage at `path`; the local copy is removed. */
  async store(storage: { put(path: string, body: NodeJS.ReadableStream): Promise<string> }, path: string): Promise<string> {
    await this.file.close();
    return storage.put(path, this.file.read());
  }

  async discard(): Promise<void> {
    await this.file.close().catch(() => {});
    await rm(this.file.path, { force: true });
  }
}

export { isRecord as isIonStruct };
