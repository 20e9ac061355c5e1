// Test helpers: hand-made .xlsx workbooks whose zip says what the test wants (a part's declared size may lie, a part
// may be a deflate bomb generated as a stream), for the bounds of serdes.excel.ExcelToIon (excel.test.ts and the
// child process test/support/excel-bomb-child.ts). Every byte is real deflate data a zip reader inflates.
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import zlib from 'node:zlib';

/** One zip entry: its raw deflate data, the size it really inflates to, and the size the zip declares. */
export interface ZipPart { name: string; deflated: Buffer; size: number; declared?: number }

const NS = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
const REL_NS = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';

/** Deflates the text chunks `gen` yields (streamed: a bomb of gigabytes needs no memory). */
export async function deflatePart(name: string, gen: () => Iterable<string>): Promise<ZipPart> {
  const out: Buffer[] = [];
  let size = 0;
  const counted = Readable.from((function* () { for (const c of gen()) { const b = Buffer.from(c); size += b.length; yield b; } })());
  await pipeline(counted, zlib.createDeflateRaw({ level: 9 }), new Writable({ write(c: Buffer, _e, done) { out.push(c); done(); } }));
  return { name, deflated: Buffer.concat(out), size };
}

/** A zip of `parts` (deflated), each declaring `declared ?? size` as its uncompressed size. */
export function zipOf(parts: ZipPart[]): Buffer {
  const locals: Buffer[] = [];
  const central: Buffer[] = [];
  let offset = 0;
  for (const p of parts) {
    const name = Buffer.from(p.name);
    const declared = p.declared ?? p.size;
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4);
    local.writeUInt16LE(8, 8); // deflate
    local.writeUInt32LE(p.deflated.length, 18);
    local.writeUInt32LE(declared, 22);
    local.writeUInt16LE(name.length, 26);
    const cd = Buffer.alloc(46);
    cd.writeUInt32LE(0x02014b50, 0);
    cd.writeUInt16LE(20, 4);
    cd.writeUInt16LE(20, 6);
    cd.writeUInt16LE(8, 10);
    cd.writeUInt32LE(p.deflated.length, 20);
    cd.writeUInt32LE(declared, 24);
    cd.writeUInt16LE(name.length, 28);
    cd.writeUInt32LE(offset, 42);
    locals.push(local, name, p.deflated);
    central.push(cd, name);
    offset += local.length + name.length + p.deflated.length;
  }
  const cdBytes = Buffer.concat(central);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(parts.length, 8);
  end.writeUInt16LE(parts.length, 10);
  end.writeUInt32LE(cdBytes.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, cdBytes, end]);
}

/** `<si>` items of `chars` characters each, `count` of them (distinct: each starts with its index). */
export function* sharedStringItems(count: number, chars: number): Iterable<string> {
  yield `<?xml version="1.0" encoding="UTF-8"?><sst xmlns="${NS}" count="${count}" uniqueCount="${count}">`;
  const pad = 'x'.repeat(chars);
  let batch = '';
  for (let i = 0; i < count; i++) {
    batch += `<si><t>${i}${pad.slice(String(i).length)}</t></si>`;
    if (batch.length > 64 * 1024) { yield batch; batch = ''; }
  }
  yield `${batch}</sst>`;
}

/**
 * A deflate bomb of a shared-strings table: `mib` MiB of the same `<si>` item over and over, `chars` characters of
 * text, or (`rich`) `chars` rich-text runs of one bold character (the costliest shape to hold).
 */
export function bombStringItems(mib: number, chars: number, rich = false): () => Iterable<string> {
  return function* () {
    yield `<?xml version="1.0" encoding="UTF-8"?><sst xmlns="${NS}">`;
    const item = rich ? `<si>${'<r><rPr><b/></rPr><t>b</t></r>'.repeat(chars)}</si>` : `<si><t>${'b'.repeat(chars)}</t></si>`;
    const chunk = item.repeat(Math.ceil(1024 * 1024 / item.length));
    for (let k = 0; k < mib; k++) yield chunk;
    yield '</sst>';
  };
}

/** A sheet `S` whose first column is header `name` then the shared strings 1..rows (`t="s"` cells). */
export function* sheetItems(rows: number, filler = 0): Iterable<string> {
  yield `<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="${NS}"><sheetData>`;
  for (let r = 0; r <= rows; r++) yield `<row r="${r + 1}"><c r="A${r + 1}" t="s"><v>${r}</v></c></row>`;
  const blank = ' '.repeat(1024 * 1024);
  for (let k = 0; k < filler; k++) yield blank; // whitespace between elements: `filler` MiB that inflate to nothing
  yield '</sheetData></worksheet>';
}

/**
 * A workbook of one sheet `S` (`name` header, then `rows` rows) with `strings` shared strings of `chars` characters;
 * `sharedDeclared` / `sheetDeclared` make the zip declare those sizes instead of the real ones; `sheetFiller` adds
 * that many MiB of whitespace to the sheet (a deflate bomb).
 */
export async function handmadeXlsx(o: {
  strings: number; chars: number; rows: number; sharedDeclared?: number; sheetDeclared?: number; sheetFiller?: number; sharedStrings?: ZipPart;
}): Promise<Buffer> {
  const text = (name: string, xml: string) => deflatePart(name, () => [xml]);
  const strings = o.sharedStrings ?? await deflatePart('xl/sharedStrings.xml', () => sharedStringItems(o.strings, o.chars));
  const sheet = await deflatePart('xl/worksheets/sheet1.xml', () => sheetItems(o.rows, o.sheetFiller ?? 0));
  return zipOf([
    await text('[Content_Types].xml', '<?xml version="1.0" encoding="UTF-8"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"/>'),
    await text('xl/workbook.xml', `<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="${NS}" xmlns:r="${REL_NS}"><sheets><sheet name="S" sheetId="1" r:id="rId1"/></sheets></workbook>`),
    await text('xl/_rels/workbook.xml.rels', `<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${REL_NS}/worksheet" Target="worksheets/sheet1.xml"/></Relationships>`),
    { ...sheet, declared: o.sheetDeclared },
    { ...strings, declared: o.sharedDeclared ?? strings.declared },
  ]);
}
