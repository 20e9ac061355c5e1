// Bounded reading of a hostile .xlsx for serdes.excel.ExcelToIon: the workbook (a local copy) is opened through its
// zip central directory with yauzl and exceljs's streaming WorkbookReader is fed one metered part at a time, in the
// order it needs them (relationships, workbook, shared strings, styles, then each sheet as it is read; no other entry
// is inflated and no sheet is spilled to a temporary file). The parts exceljs holds in memory are bounded together by
// SERDES_MAX_SHARED_STRINGS_BYTES, every part by ARCHIVE_MAX_EXTRACTED_BYTES, the entries by ARCHIVE_MAX_ENTRIES:
// declared sizes are checked before anything is inflated, and the bytes really inflated are counted as they come
// (a zip can lie about its sizes), so a huge or zip-bombed xl/sharedStrings.xml fails the task naming the setting.
import { Transform, type Readable } from 'node:stream';
import yauzl from 'yauzl';
import { limitError, type LimitName, type Limits } from '../../core/limits.js';

/** The parts exceljs parses whole into memory (the workbook's model, shared strings, styles). */
const HELD = ['xl/_rels/workbook.xml.rels', 'xl/workbook.xml', 'xl/sharedStrings.xml', 'xl/styles.xml'] as const;
const SHEET = /^xl\/worksheets\/sheet(\d+)\.xml$/;

/** The parts of exceljs's WorkbookReader (4.x) this feeds: its own per-part parsers, given streams we control. */
interface ReaderParts {
  _parseRels(entry: Readable): Promise<void>;
  _parseWorkbook(entry: Readable): Promise<void>;
  _parseSharedStrings(entry: Readable): AsyncGenerator<unknown>;
  _parseStyles(entry: Readable): Promise<void>;
  _parseWorksheet(iterator: AsyncIterable<Buffer>, sheetNo: string): Generator<unknown>;
}

/** Bytes inflated so far against one limit; past it, `add` throws the limit's error. */
export class InflateBudget {
  used = 0;
  constructor(private readonly name: LimitName, private readonly limits: Limits, private readonly what: string) {}
  add(n: number): void {
    this.used += n;
    if (this.used > this.limits[this.name]) throw limitError(this.name, this.what, this.limits);
  }
}

/**
 * Heap a cached rich-text shared string costs beyond its XML bytes (measured on Node 20: about 220 bytes for the item
 * and its run array, 100 per run and its font): charged to the same budget, so the table held stays within about twice
 * SERDES_MAX_SHARED_STRINGS_BYTES whatever its shape (plain strings cost about 1.2-1.9 times their XML bytes).
 */
const RICH_ITEM_BYTES = 256;
const RICH_RUN_BYTES = 128;

/** Charges every item exceljs caches into `reader.sharedStrings` (an array it assigns, then pushes to) to `held`. */
function meterSharedStrings(reader: object, held: InflateBudget): void {
  let table: unknown[] | undefined;
  Object.defineProperty(reader, 'sharedStrings', {
    configurable: true,
    enumerable: true,
    get: () => table,
    set: (v: unknown) => {
      table = v as unknown[];
      if (!Array.isArray(v)) return;
      v.push = function push(this: unknown[], ...items: unknown[]): number {
        for (const it of items) {
          const runs = (it as { richText?: unknown[] } | null)?.richText;
          if (Array.isArray(runs)) held.add(RICH_ITEM_BYTES + runs.length * RICH_RUN_BYTES);
        }
        return Array.prototype.push.apply(this, items);
      };
    },
  });
}

const openZip = (file: string): Promise<yauzl.ZipFile> => new Promise((resolve, reject) => yauzl.open(file,
  // sizes are not trusted (validateEntrySizes would refuse a lying entry without naming the bound): they are metered
  { lazyEntries: true, autoClose: false, validateEntrySizes: false, strictFileNames: false, decodeStrings: true },
  (err, z) => (err ? reject(err) : resolve(z))));

async function listEntries(zip: yauzl.ZipFile, keep: (name: string) => boolean): Promise<Map<string, yauzl.Entry>> {
  const out = new Map<string, yauzl.Entry>();
  await new Promise<void>((resolve, reject) => {
    zip.on('entry', (e: yauzl.Entry) => { if (keep(e.fileName) && !out.has(e.fileName)) out.set(e.fileName, e); zip.readEntry(); });
    zip.once('end', () => resolve());
    zip.once('error', reject);
    zip.readEntry();
  });
  zip.removeAllListeners('entry');
  return out;
}

/** The inflated bytes of `entry`, counted against every budget as they come; past one, the stream fails with its error. */
async function meteredPart(zip: yauzl.ZipFile, entry: yauzl.Entry, budgets: InflateBudget[]): Promise<Readable> {
  const source = await new Promise<Readable>((resolve, reject) => zip.openReadStream(entry, (err, s) => (err ? reject(err) : resolve(s))));
  const meter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      try {
        for (const b of budgets) b.add(chunk.length);
        done(null, chunk);
      } catch (err) {
        done(err as Error);
      }
    },
  });
  source.on('error', (err) => meter.destroy(err));
  meter.on('close', () => { if (!source.readableEnded) source.destroy(); }); // stop inflating once nobody reads
  return source.pipe(meter);
}

export interface BoundedWorkbook {
  /** exceljs's WorkbookReader, iterated as usual (`for await (const ws of reader)`); sheets are inflated when iterated. */
  reader: AsyncIterable<unknown>;
  /** Bytes inflated for the held parts (the shared strings, styles, workbook and relationships). */
  held: InflateBudget;
  close(): void;
}

/**
 * Opens the workbook at `file` (a local file) for `WorkbookReader` (exceljs's class) with `options`; refuses it when
 * its entries or the declared sizes are over the limits. `what` names the task and file in errors.
 */
export async function openBoundedWorkbook(
  WorkbookReader: new (input: unknown, options: object) => object, file: string, options: object, limits: Limits, what: string,
): Promise<BoundedWorkbook> {
  const zip = await openZip(file);
  try {
    if (zip.entryCount > limits.archiveMaxEntries) {
      throw limitError('archiveMaxEntries', `${what}: the workbook has ${zip.entryCount} entries`, limits);
    }
    const entries = await listEntries(zip, (n) => (HELD as readonly string[]).includes(n) || SHEET.test(n));
    const held = new InflateBudget('serdesMaxSharedStringsBytes', limits, `${what}: its shared strings, styles and workbook parts take more bytes`);
    const total = new InflateBudget('archiveMaxExtractedBytes', limits, `${what}: the workbook inflates to more bytes`);
    let declaredHeld = 0;
    let declaredTotal = 0;
    for (const [name, e] of entries) {
      declaredTotal += e.uncompressedSize;
      if ((HELD as readonly string[]).includes(name)) declaredHeld += e.uncompressedSize;
    }
    if (declaredHeld > limits.serdesMaxSharedStringsBytes) {
      throw limitError('serdesMaxSharedStringsBytes', `${what}: its shared strings, styles and workbook parts declare ${declaredHeld} bytes`, limits);
    }
    if (declaredTotal > limits.archiveMaxExtractedBytes) {
      throw limitError('archiveMaxExtractedBytes', `${what}: the workbook declares ${declaredTotal} bytes`, limits);
    }
    const part = (name: string, budgets: InflateBudget[]): Promise<Readable> | undefined => {
      const e = entries.get(name);
      return e ? meteredPart(zip, e, budgets) : undefined;
    };
    const sheets = [...entries.keys()].filter((n) => SHEET.test(n));
    class Bounded extends (WorkbookReader as new (input: unknown, options: object) => ReaderParts) {
      // replaces WorkbookReader.parse, which reads the zip front to back with unzipper (no bound on what it inflates)
      async *parse(): AsyncGenerator<unknown> {
        const parts: ReaderParts = this;
        const rels = part('xl/_rels/workbook.xml.rels', [held, total]);
        if (rels) await parts._parseRels(await rels);
        const book = part('xl/workbook.xml', [held, total]);
        if (book) await parts._parseWorkbook(await book);
        const strings = part('xl/sharedStrings.xml', [held, total]);
        if (strings) yield* parts._parseSharedStrings(await strings);
        const styles = part('xl/styles.xml', [held, total]);
        if (styles) await parts._parseStyles(await styles);
        for (const name of sheets) {
          const lazy = { async *[Symbol.asyncIterator]() { yield* (await part(name, [total])!) as AsyncIterable<Buffer>; } };
          yield* parts._parseWorksheet(lazy, SHEET.exec(name)![1]);
        }
      }
    }
    const reader = new Bounded(undefined, options);
    meterSharedStrings(reader, held);
    return { reader: reader as unknown as AsyncIterable<unknown>, held, close: () => zip.close() };
  } catch (err) {
    zip.close();
    throw err;
  }
}
