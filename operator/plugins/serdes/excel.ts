// serdes.excel.ExcelToIon and IonToExcel: .xlsx workbooks to and from ION rows with exceljs's streaming reader and
// writer: rows are read and written one at a time (no shared-strings table is written; a workbook's own shared
// strings are held while it is read, bounded by SERDES_MAX_SHARED_STRINGS_BYTES: see excel-zip.ts). One row is at
// most STORAGE_MAX_ITEM_BYTES of text.
import { createReadStream, createWriteStream } from 'node:fs';
import { pipeline } from 'node:stream/promises';
import { definePlugin, p } from '../define.js';
import { fromProp, outputPath, textWriterProps, withScratch } from './common.js';

const VALUE_RENDERS = ['FORMATTED_VALUE', 'UNFORMATTED_VALUE', 'FORMULA'] as const;
const DATE_RENDERS = ['UNFORMATTED_VALUE', 'SERIAL_NUMBER', 'FORMATTED_STRING'] as const;
const EXCEL_EPOCH_DAYS = 25569; // 1970-01-01 as an Excel serial number

/** A Java DateTimeFormatter pattern as an Excel number format (optional sections and offsets dropped). */
export function excelFormat(java: string): string {
  return java.replace(/\[[^\]]*\]/g, '').replace(/X+|x+|Z+/g, '').replace(/'([^']*)'/g, '"$1"')
    .replace(/M/g, 'm').replace(/H/g, 'h').replace(/S+/g, (s) => '0'.repeat(s.length)).trim();
}

export const excelToIon = definePlugin({
  type: 'serdes.excel.ExcelToIon',
  title: 'Convert an Excel file into ION',
  description: 'Reads an .xlsx workbook row by row (streaming) and writes one ION file per sheet (`uris`: sheet name → URI). With `header`, the first '
    + 'row (after `skipRows`) names the fields of map rows; otherwise rows are lists. Dates are timestamps (`dateTimeRender`), formulas their '
    + 'cached result. The `charset` of an .xlsx is always UTF-8 (its XML says so); others are refused.',
  properties: {
    from: fromProp('Excel (.xlsx)'),
    sheetsTitle: p.stringList().describe('The sheets to read (all when absent).'),
    charset: p.string().default('UTF-8').describe('Charset of the workbook: UTF-8 (an .xlsx is XML in UTF-8).'),
    valueRender: p.enum(VALUE_RENDERS).default('UNFORMATTED_VALUE').describe('UNFORMATTED_VALUE or FORMATTED_VALUE: cell values (formulas give their cached result); FORMULA: only the cached results of numbers and text.'),
    dateTimeRender: p.enum(DATE_RENDERS).default('UNFORMATTED_VALUE').describe('Dates as timestamps (UNFORMATTED_VALUE), Excel serial numbers (SERIAL_NUMBER) or the cell\'s formatted text (FORMATTED_STRING).'),
    header: p.boolean().default(true).describe('The first row is the header.'),
    skipEmptyRows: p.boolean().default(false).describe('Drop blank cells (Kestra\'s behaviour: blank cells are left out of the row, not the row itself; empty rows are then empty).'),
    skipRows: p.integer({ min: 0 }).default(0).describe('Rows to skip at the start of the workbook (before the header).'),
  },
  outputs: {
    uris: { type: 'object', description: 'URI of the ION file of each sheet read, by sheet name (`{{ outputs.task.uris.Sheet1 }}`).' },
    size: { type: 'integer', description: 'Rows read, all sheets together (the header rows included, as Kestra counts them).' },
  },
  examples: [{
    title: 'Read one sheet of a workbook',
    code: `id: excel_to_ion
namespace: company.team
tasks:
  - id: to_ion
    type: io.kestra.plugin.serdes.excel.ExcelToIon
    from: "{{ inputs.file }}"
    sheetsTitle: [Products]`,
  }],
  async run(ctx, props) {
    const { excelUtf8Fixed, loadExcelJS } = await import('./excel-utf8.js'); // before exceljs loads
    if (!excelUtf8Fixed) ctx.logger.warn('exceljs was loaded before its UTF-8 fix: characters split across chunks may read as U+FFFD');
    const [ExcelJS, { IonRowWriter, IonTimestamp }, { LimitError, limitError, limitsFromEnv }, { openBoundedWorkbook }] = await Promise.all([
      loadExcelJS(), import('../../storage/ion.js'), import('../../core/limits.js'), import('./excel-zip.js'),
    ]);
    if (!/^utf-?8$/i.test(props.charset.trim())) throw new Error(`Property 'charset': an .xlsx workbook is UTF-8, got '${props.charset}'`);
    const limits = limitsFromEnv(process.env);
    const what = `serdes.excel.ExcelToIon of '${props.from}'`;
    const wanted = props.sheetsTitle && props.sheetsTitle.length > 0 ? new Set(props.sheetsTitle) : undefined;
    const uris: Record<string, string> = {};
    let size = 0;
    let sheets = 0;
    let skipped = 0;
    type Cell = { value: unknown; text: string; type: number };
    const cellValue = (cell: Cell): { keep: boolean; value?: unknown } => {
      let v = cell.value;
      const formula = v !== null && typeof v === 'object' && ('formula' in (v as object) || 'sharedFormula' in (v as object));
      if (formula) v = (v as { result?: unknown }).result ?? null;
      if (v !== null && typeof v === 'object' && 'error' in (v as object)) v = (v as { error: string }).error;
      if (v !== null && typeof v === 'object' && 'richText' in (v as object)) v = (v as { richText: { text: string }[] }).richText.map((r) => r.text).join('');
      if (v !== null && typeof v === 'object' && 'hyperlink' in (v as object)) v = (v as { text?: unknown }).text ?? '';
      if (props.valueRender === 'FORMULA' && !(typeof v === 'number' || typeof v === 'string' || v instanceof Date)) return { keep: false };
      if (v === null || v === undefined) return props.skipEmptyRows ? { keep: false } : { keep: true, value: '' };
      if (v instanceof Date) {
        if (props.dateTimeRender === 'SERIAL_NUMBER') return { keep: true, value: v.getTime() / 86_400_000 + EXCEL_EPOCH_DAYS };
        if (props.dateTimeRender === 'FORMATTED_STRING') return { keep: true, value: cell.text };
        return { keep: true, value: new IonTimestamp(v.toISOString()) };
      }
      return { keep: true, value: v };
    };
    // a zip is read through its central directory (at its end): the workbook is copied to a file of this task run first
    await withScratch(ctx, 'xlsx', async (file) => {
      await pipeline(await ctx.storage.stream(props.from) as NodeJS.ReadableStream, createWriteStream(file, { mode: 0o600 }));
      let book: Awaited<ReturnType<typeof openBoundedWorkbook>>;
      try {
        book = await openBoundedWorkbook(ExcelJS.stream.xlsx.WorkbookReader as never, file, {
          sharedStrings: 'cache', worksheets: 'emit', hyperlinks: 'ignore', styles: 'cache', entries: 'ignore',
        }, limits, what);
      } catch (err) {
        if (err instanceof LimitError) throw err;
        throw new Error(`${what}: not a readable .xlsx workbook: ${(err as Error).message}`);
      }
      try {
        await readSheets(book.reader);
      } catch (err) {
        if (err instanceof LimitError) throw err;
        throw new Error(`${what}: not a readable .xlsx workbook: ${(err as Error).message}`);
      } finally {
        book.close();
      }
    });
    return { state: 'SUCCESS', outputs: { uris, size }, metrics: [{ name: 'sheets', type: 'counter', value: sheets }] };

    async function readSheets(reader: AsyncIterable<unknown>): Promise<void> {
      for await (const ws of reader as AsyncIterable<AsyncIterable<{ values: unknown; getCell(i: number): Cell; cellCount: number }> & { id: string; name: string }>) {
        sheets++;
        const r = reader as unknown as { model?: { sheets?: { name: string; rId: string }[] }; workbookRels?: { Id: string; Target: string }[] };
        const rel = r.workbookRels?.find((x) => x.Target.endsWith(`worksheets/sheet${ws.id}.xml`));
        const name = r.model?.sheets?.find((s) => s.rId === rel?.Id)?.name ?? ws.name;
        if (wanted && !wanted.has(name)) continue; // never inflated
        const out = new IonRowWriter(ctx.workingDir);
        try {
          let header: string[] | undefined;
          for await (const row of ws) {
            if (skipped < props.skipRows) { skipped++; continue; }
            const values: unknown[] = [];
            let held = 0;
            for (let i = 1; i <= row.cellCount; i++) {
              const c = cellValue(row.getCell(i));
              if (!c.keep) continue;
              held += typeof c.value === 'string' ? c.value.length : 8;
              if (held > limits.storageMaxItemBytes) throw limitError('storageMaxItemBytes', `${what}: a row of more than ${limits.storageMaxItemBytes} characters`, limits);
              values.push(c.value);
            }
            size++;
            if (props.header && !header) { header = values.map((v) => String(v instanceof IonTimestamp ? v.text : v)); continue; }
            if (header) {
              const obj: Record<string, unknown> = Object.create(null);
              header.forEach((h, k) => { obj[h] = k < values.length ? values[k] : null; });
              await out.write(obj);
            } else await out.write(values);
          }
          uris[name] = await out.store(ctx.storage, outputPath(ctx, 'ion'));
        } finally {
          await out.discard();
        }
      }
    }
  },
});

export const ionToExcel = definePlugin({
  type: 'serdes.excel.IonToExcel',
  title: 'Convert an ION file to an Excel file',
  description: 'Writes ION rows to an .xlsx workbook with exceljs\'s streaming writer (each row is written out as it comes). `from` is one ION URI '
    + '(one sheet titled `sheetsTitle`) or a map of sheet title → ION URI. Map rows give the first row\'s keys as the header (`header`), list '
    + 'rows need `header: false`. Numbers and booleans are cells of their type, timestamps dates (formatted with `dateFormat`/`dateTimeFormat` '
    + 'when `styles`), text starting with `Formula:` a formula, nested values JSON text.',
  properties: {
    from: p.any().describe('URI of the ION file, or a map of sheet title → ION file URI.'),
    charset: p.string().default('UTF-8').describe('Charset of the ION file(s): UTF-8 (ION text is UTF-8).'),
    sheetsTitle: p.string().default('Sheet').describe('Title of the sheet when `from` is one URI.'),
    header: p.boolean().default(true).describe('Write the first row\'s keys as a header row.'),
    styles: p.boolean().default(true).describe('Give date cells a number format (`dateFormat`, `dateTimeFormat`).'),
    ...textWriterProps,
  },
  outputs: {
    uri: { type: 'uri', description: 'URI of the .xlsx file written.' },
    size: { type: 'integer', description: 'Rows written (all sheets).' },
  },
  examples: [{
    title: 'Two ION files as two sheets',
    code: `id: ion_to_excel
namespace: company.team
tasks:
  - id: to_excel
    type: io.kestra.plugin.serdes.excel.IonToExcel
    from:
      Products: "{{ outputs.products.uri }}"
      Orders: "{{ outputs.orders.uri }}"`,
  }],
  async run(ctx, props) {
    const { loadExcelJS } = await import('./excel-utf8.js'); // exceljs always loaded after its UTF-8 fix
    const [ExcelJS, { readIonRows, IonTimestamp, IonDecimal }, { limitsFromEnv }, { systemZone }] = await Promise.all([
      loadExcelJS(), import('../../storage/ion.js'), import('../../core/limits.js'), import('./common.js'),
    ]);
    if (!/^utf-?8$/i.test(props.charset.trim())) throw new Error(`Property 'charset': ION files are UTF-8, got '${props.charset}'`);
    let sources: [string, string][];
    if (typeof props.from === 'string' && props.from.trim() !== '') sources = [[props.sheetsTitle, props.from]];
    else if (props.from && typeof props.from === 'object' && !Array.isArray(props.from) && Object.keys(props.from).length > 0) {
      sources = Object.entries(props.from as Record<string, unknown>).map(([k, uri]) => {
        if (typeof uri !== 'string') throw new Error(`Property 'from.${k}' must be a URI`);
        return [k, uri];
      });
    } else throw new Error("Property 'from' must be a URI or a map of sheet title → URI");
    const zone = props.timeZoneId || systemZone();
    const { DateTime } = await import('luxon');
    if (!DateTime.now().setZone(zone).isValid) throw new Error(`Property 'timeZoneId': unknown time zone '${zone}'`);
    const dateFmt = excelFormat(props.dateFormat);
    const dateTimeFmt = excelFormat(props.dateTimeFormat);
    const limits = limitsFromEnv(process.env);
    return withScratch(ctx, 'xlsx', async (path) => {
      const wb = new ExcelJS.stream.xlsx.WorkbookWriter({ filename: path, useStyles: props.styles, useSharedStrings: false });
      let size = 0;
      for (const [title, uri] of sources) {
        const ws = wb.addWorksheet(title);
        let first = true;
        const cell = (v: unknown): { value: unknown; numFmt?: string } => {
          if (v === null || v === undefined) return { value: null };
          if (typeof v === 'number' || typeof v === 'boolean') return { value: v };
          if (typeof v === 'bigint') return { value: v.toString() };
          if (v instanceof IonDecimal) return { value: Number(v.text) };
          if (v instanceof IonTimestamp) {
            const d = v.dateOnly ? v.toDate()
              : v.hasOffset ? v.toDate()
              : DateTime.fromISO(v.text.replace(/-00:00$/, ''), { zone }).toJSDate();
            return { value: d, numFmt: props.styles ? (v.dateOnly ? dateFmt : dateTimeFmt) : undefined };
          }
          if (typeof v === 'string') return v.startsWith('Formula:') ? { value: { formula: v.slice(8) } } : { value: v };
          if (v instanceof Uint8Array) return { value: Buffer.from(v).toString('base64') };
          return { value: JSON.stringify(v) };
        };
        const write = (values: unknown[]) => {
          const cells = values.map(cell);
          const row = ws.addRow(cells.map((c) => c.value));
          cells.forEach((c, k) => { if (c.numFmt) row.getCell(k + 1).numFmt = c.numFmt; });
          row.commit();
        };
        for await (const row of readIonRows(await ctx.storage.stream(uri), limits, `serdes.excel.IonToExcel of '${uri}'`)) {
          if (Array.isArray(row)) {
            if (props.header) throw new Error(`Row ${size + 1}: invalid data of type List with header (set 'header: false')`);
            write(row);
          } else if (row !== null && typeof row === 'object') {
            if (first && props.header) write(Object.keys(row));
            write(Object.values(row));
          } else throw new Error(`Row ${size + 1}: an Excel row must be a map or a list`);
          first = false;
          size++;
        }
        ws.commit();
      }
      await wb.commit();
      const uri = await ctx.storage.put(outputPath(ctx, 'xlsx'), createReadStream(path));
      return { state: 'SUCCESS', outputs: { uri, size }, metrics: [{ name: 'records', type: 'counter', value: size }] };
    });
  },
});
