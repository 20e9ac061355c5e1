// Tests of serdes.excel.IonToExcel and ExcelToIon: workbooks exceljs writes are read (sheets by name, headers, dates,
// formulas, rich text), workbooks we write are read back by exceljs, round trips, and hostile input.
import { excelUtf8Fixed } from './excel-utf8.js'; // first: it must be loaded before exceljs
import ExcelJS from 'exceljs';
import { afterEach, describe, expect, it } from 'vitest';
import { cleanupConverted, convert, plain } from './test-helpers.js';
import { excelFormat, excelToIon, ionToExcel } from './excel.js';
import { makeTestContext } from '../testing.js';
import { deflatePart, handmadeXlsx, zipOf } from './xlsx-fixtures.js';

const BOUNDS = ['STORAGE_MAX_ITEM_BYTES', 'SERDES_MAX_SHARED_STRINGS_BYTES', 'ARCHIVE_MAX_EXTRACTED_BYTES', 'ARCHIVE_MAX_ENTRIES'];
afterEach(async () => { await cleanupConverted(); for (const k of BOUNDS) delete process.env[k]; });

async function workbook(): Promise<Buffer> {
  const wb = new ExcelJS.Workbook();
  const products = wb.addWorksheet('Products');
  products.addRow(['id', 'name', 'price', 'added', 'total', 'ok']);
  products.addRow([1, 'Lamp', 12.5, new Date('2024-01-31T00:00:00Z'), { formula: 'C2*2', result: 25 }, true]);
  products.addRow([2, { richText: [{ text: 'De' }, { text: 'sk' }] }, 3, null, { formula: 'C3*2', result: 6 }, false]);
  const other = wb.addWorksheet('Other');
  other.addRow(['title row']);
  other.addRow(['a', 'b']);
  other.addRow([1, 2]);
  return Buffer.from(await wb.xlsx.writeBuffer());
}

describe('ExcelToIon', () => {
  it('reads a multi-byte character split across the chunks of a large sheet whole (exceljs\'s own reader does not)', async () => {
    expect(excelUtf8Fixed).toBe(true);
    const wb = new ExcelJS.Workbook();
    const ws = wb.addWorksheet('S');
    ws.addRow(['text']);
    for (let i = 0; i < 20_000; i++) ws.addRow([`é${i}${'a'.repeat(i % 7)}ü中`]); // distinct: a large shared-strings part
    const c = await convert(excelToIon, {}, Buffer.from(await wb.xlsx.writeBuffer()));
    const text = (await c.t.stores.storage.get((c.r.outputs!.uris as Record<string, string>).S)).toString();
    expect(text).not.toContain('\uFFFD');
    expect(text.split('\n').filter(Boolean).length).toBe(20_000);
  });

  it('reads every sheet into its own ION file, the header naming the fields; dates, formulas (cached result), rich text', async () => {
    const c = await convert(excelToIon, {}, await workbook());
    expect(c.r.state).toBe('SUCCESS');
    expect(c.r.metrics).toEqual([{ name: 'sheets', type: 'counter', value: 2 }]);
    const uris = c.r.outputs!.uris as Record<string, string>;
    expect(Object.keys(uris).sort()).toEqual(['Other', 'Products']);
    expect((await c.t.stores.storage.get(uris.Products)).toString()).toBe(
      '{"id":1,"name":"Lamp","price":12.5,"added":2024-01-31T00:00:00.000Z,"total":25,"ok":true}\n{"id":2,"name":"Desk","price":3,"added":"","total":6,"ok":false}\n');
    expect(c.r.outputs!.size).toBe(6);
  });

  it('sheetsTitle, skipRows, header: false, dateTimeRender SERIAL_NUMBER, skipEmptyRows', async () => {
    const c = await convert(excelToIon, { sheetsTitle: ['Other'], skipRows: 1 }, await workbook());
    const uris = c.r.outputs!.uris as Record<string, string>;
    expect(Object.keys(uris)).toEqual(['Other']);
    expect((await c.t.stores.storage.get(uris.Other)).toString()).toBe('{"a":1,"b":2}\n');
    const raw = await convert(excelToIon, { header: false, sheetsTitle: ['Products'], dateTimeRender: 'SERIAL_NUMBER', skipEmptyRows: true }, await workbook());
    const text = (await raw.t.stores.storage.get((raw.r.outputs!.uris as Record<string, string>).Products)).toString().split('\n');
    expect(text[1]).toBe('[1,"Lamp",12.5,45322,25,true]');
    expect(text[2]).toBe('[2,"Desk",3,6,false]'); // the blank cell is left out
  });

  it('refuses a file that is not a workbook, another charset, and a row over STORAGE_MAX_ITEM_BYTES', async () => {
    expect((await convert(excelToIon, {}, 'id,name\n1,a\n')).r.error).toMatch(/not a readable .xlsx workbook/);
    expect((await convert(excelToIon, { charset: 'ISO-8859-1' }, await workbook())).r.error).toMatch(/Property 'charset'/);
    const wb = new ExcelJS.Workbook();
    wb.addWorksheet('S').addRow(['x'.repeat(3000)]);
    process.env.STORAGE_MAX_ITEM_BYTES = '2048';
    expect((await convert(excelToIon, {}, Buffer.from(await wb.xlsx.writeBuffer()))).r.error).toMatch(/STORAGE_MAX_ITEM_BYTES/);
  });
});

describe('ExcelToIon bounds on a hostile workbook', () => {
  const KIB = 1024;

  it('reads a hand-made workbook in Excel\'s part order, sheets before xl/sharedStrings.xml (exceljs\'s own reader gives {sharedString: n} there); the bound tests use it', async () => {
    const c = await convert(excelToIon, {}, await handmadeXlsx({ strings: 3, chars: 8, rows: 2 }));
    expect(c.r.state).toBe('SUCCESS');
    const uris = c.r.outputs!.uris as Record<string, string>;
    expect((await c.t.stores.storage.get(uris.S)).toString()).toBe('{"0xxxxxxx":"1xxxxxxx"}\n{"0xxxxxxx":"2xxxxxxx"}\n');
  });

  it('refuses shared strings declared over SERDES_MAX_SHARED_STRINGS_BYTES before inflating them', async () => {
    process.env.SERDES_MAX_SHARED_STRINGS_BYTES = String(64 * KIB);
    const xlsx = await handmadeXlsx({ strings: 2000, chars: 40, rows: 2 }); // ~100 KiB of shared strings
    const c = await convert(excelToIon, {}, xlsx);
    expect(c.r.state).toBe('FAILED');
    expect(c.r.error).toMatch(/shared strings, styles and workbook parts declare \d+ bytes: over the limit of 65536 .*setting SERDES_MAX_SHARED_STRINGS_BYTES/);
    delete process.env.SERDES_MAX_SHARED_STRINGS_BYTES; // the same workbook under the default bound
    expect((await convert(excelToIon, {}, xlsx)).r.state).toBe('SUCCESS');
  });

  it('counts the bytes really inflated: shared strings that declare 100 bytes and inflate to 8 MiB stop at the bound', async () => {
    process.env.SERDES_MAX_SHARED_STRINGS_BYTES = String(256 * KIB);
    const c = await convert(excelToIon, {}, await handmadeXlsx({ strings: 100_000, chars: 64, rows: 2, sharedDeclared: 100 }));
    expect(c.r.state).toBe('FAILED');
    expect(c.r.error).toMatch(/shared strings, styles and workbook parts take more bytes: over the limit of 262144 .*setting SERDES_MAX_SHARED_STRINGS_BYTES/);
  });

  it('a deflate bomb of a sheet (declared small) stops at ARCHIVE_MAX_EXTRACTED_BYTES', async () => {
    process.env.ARCHIVE_MAX_EXTRACTED_BYTES = String(4 * 1024 * KIB);
    const xlsx = await handmadeXlsx({ strings: 3, chars: 8, rows: 2, sheetFiller: 64, sheetDeclared: 1000 });
    expect(xlsx.length).toBeLessThan(256 * KIB); // 64 MiB of XML in a small file
    const c = await convert(excelToIon, {}, xlsx);
    expect(c.r.state).toBe('FAILED');
    expect(c.r.error).toMatch(/the workbook inflates to more bytes: over the limit of 4194304 .*setting ARCHIVE_MAX_EXTRACTED_BYTES/);
    delete process.env.ARCHIVE_MAX_EXTRACTED_BYTES;
    expect((await convert(excelToIon, {}, xlsx)).r.state).toBe('SUCCESS'); // 64 MiB is within the default
  });

  it('an unwanted sheet is never inflated (sheetsTitle): its bomb is not read', async () => {
    process.env.ARCHIVE_MAX_EXTRACTED_BYTES = String(4 * 1024 * KIB);
    const base = await handmadeXlsx({ strings: 3, chars: 8, rows: 2 });
    const c = await convert(excelToIon, { sheetsTitle: ['Other'] }, base);
    expect(c.r.state).toBe('SUCCESS');
    expect(c.r.outputs!.uris).toEqual({});
    const bomb = await handmadeXlsx({ strings: 3, chars: 8, rows: 2, sheetFiller: 64, sheetDeclared: 1000 });
    expect((await convert(excelToIon, { sheetsTitle: ['Other'] }, bomb)).r.state).toBe('SUCCESS');
  });

  it('refuses a workbook of more entries than ARCHIVE_MAX_ENTRIES', async () => {
    process.env.ARCHIVE_MAX_ENTRIES = '5';
    const parts = await Promise.all(Array.from({ length: 6 }, (_, i) => deflatePart(`docProps/x${i}.xml`, () => ['<x/>'])));
    const c = await convert(excelToIon, {}, zipOf(parts));
    expect(c.r.error).toMatch(/the workbook has 6 entries: over the limit of 5 .*setting ARCHIVE_MAX_ENTRIES/);
  });
});

describe('IonToExcel', () => {
  it('writes a workbook exceljs reads: header, numbers, booleans, dates with formats, formulas, nested JSON', async () => {
    const c = await convert(ionToExcel, { sheetsTitle: 'Data' }, '{id:1,name:"Lamp",ok:true,day:2024-01-31,f:"Formula:A2*2",n:{k:1}}\n{id:2,name:"Desk",ok:false,day:null,f:"x",n:[1]}\n');
    expect(c.r.outputs).toMatchObject({ size: 2 });
    expect(c.r.outputs!.uri).toMatch(/\.xlsx$/);
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.load(await c.bytes() as never);
    const ws = wb.getWorksheet('Data')!;
    expect(ws.getRow(1).values).toEqual([undefined, 'id', 'name', 'ok', 'day', 'f', 'n']);
    expect(ws.getRow(2).getCell(1).value).toBe(1);
    expect(ws.getRow(2).getCell(3).value).toBe(true);
    expect((ws.getRow(2).getCell(4).value as Date).toISOString()).toBe('2024-01-31T00:00:00.000Z');
    expect(ws.getRow(2).getCell(4).numFmt).toBe('yyyy-mm-dd');
    expect(ws.getRow(2).getCell(5).value).toMatchObject({ formula: 'A2*2' });
    expect(ws.getRow(2).getCell(6).value).toBe('{"k":1}');
  });

  it('a map of sheet title → URI writes one sheet each; round trip ION → Excel → ION', async () => {
    const t = makeTestContext({ task: { id: 'x', type: ionToExcel.type } });
    try {
      const a = await t.stores.storage.put('company/team/flow1/executions/exec1/a.ion', Buffer.from('{k:"a",n:1}\n'));
      const b = await t.stores.storage.put('company/team/flow1/executions/exec1/b.ion', Buffer.from('{k:"b",n:2.5}\n{k:"c",n:3}\n'));
      t.ctx.task = { id: 'x', type: ionToExcel.type, from: { First: a, Second: b } };
      const r = await ionToExcel.runnable.run(t.ctx);
      expect(r.outputs).toMatchObject({ size: 3 });
      t.ctx.task = { id: 'y', type: excelToIon.type, from: r.outputs!.uri };
      const back = await excelToIon.runnable.run(t.ctx);
      const uris = back.outputs!.uris as Record<string, string>;
      expect(plain(JSON.parse(JSON.stringify(Object.keys(uris))))).toEqual(['First', 'Second']);
      expect((await t.stores.storage.get(uris.Second)).toString()).toBe('{"k":"b","n":2.5}\n{"k":"c","n":3}\n');
    } finally {
      await t.cleanup();
    }
  });

  it('refuses list rows with a header, a bad from, another charset; Java formats become Excel formats', async () => {
    expect((await convert(ionToExcel, {}, '[1,2]\n')).r.error).toMatch(/List with header/);
    expect((await convert(ionToExcel, { charset: 'UTF-16' }, '{a:1}\n')).r.error).toMatch(/Property 'charset'/);
    expect(excelFormat("yyyy-MM-dd'T'HH:mm:ss.SSS[XXX]")).toBe('yyyy-mm-dd"T"hh:mm:ss.000');
  });
});
