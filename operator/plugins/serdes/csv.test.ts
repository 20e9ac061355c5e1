// Tests of serdes.csv.CsvToIon and IonToCsv over real files in local internal storage: headers, separators, quoting
// modes, nulls, charsets, dates, round trips, and hostile input (malformed quotes, field counts, huge records).
import { afterEach, describe, expect, it } from 'vitest';
import { cleanupConverted, convert, plain } from './test-helpers.js';
import { csvToIon, ionToCsv } from './csv.js';
import { makeTestContext } from '../testing.js';

afterEach(async () => { await cleanupConverted(); delete process.env.STORAGE_MAX_ITEM_BYTES; });

const CSV = 'id,name,note\n1,Ann,"a, ""quoted"" note"\n2,Bob,\\N\n3,Cé,"multi\nline"\n';

describe('CsvToIon', () => {
  it('reads a header and one map per record; \\N is null; quoted separators, quotes and line breaks are kept', async () => {
    const c = await convert(csvToIon, {}, CSV);
    expect(c.r).toMatchObject({ state: 'SUCCESS', metrics: [{ name: 'records', value: 3 }] });
    expect(c.r.outputs!.uri).toMatch(/\.ion$/);
    expect(plain(await c.rows())).toEqual([
      { id: '1', name: 'Ann', note: 'a, "quoted" note' },
      { id: '2', name: 'Bob', note: null },
      { id: '3', name: 'Cé', note: 'multi\nline' },
    ]);
  });

  it('header: false gives lists; fieldSeparator, textDelimiter, skipRows, skipEmptyRows, charset', async () => {
    const rows = await (await convert(csvToIon, { header: false, fieldSeparator: ';', textDelimiter: "'", skipRows: 1, skipEmptyRows: true }, "skip;me\na;'b;c'\n\nd;e\n")).rows();
    expect(rows).toEqual([['a', 'b;c'], ['d', 'e']]);
    const latin = Buffer.from('name\ncaf\xe9\n', 'latin1');
    expect(plain(await (await convert(csvToIon, { charset: 'ISO-8859-1' }, latin)).rows())).toEqual([{ name: 'café' }]);
    expect((await convert(csvToIon, { charset: 'klingon' }, 'a\n1\n')).r.error).toMatch(/Property 'charset': unsupported charset 'klingon'/);
    expect((await convert(csvToIon, { fieldSeparator: ';;' }, 'a\n1\n')).r.error).toMatch(/Property 'fieldSeparator' must be one character/);
  });

  it('onBadLines: ERROR fails on a different field count naming the line, WARN logs and skips, SKIP skips', async () => {
    const bad = 'a,b\n1,2\n3\n4,5\n';
    expect((await convert(csvToIon, {}, bad)).r.error).toMatch(/field count mismatch.*record 3.*Expected 2, got 1/);
    const warn = await convert(csvToIon, { onBadLines: 'WARN' }, bad);
    expect(plain(await warn.rows())).toEqual([{ a: '1', b: '2' }, { a: '4', b: '5' }]);
    expect(warn.t.messages('WARN').join()).toMatch(/field count mismatch/);
    const skip = await convert(csvToIon, { errorOnDifferentFieldCount: false }, bad);
    expect((await skip.rows()).length).toBe(2);
    expect(skip.t.messages('WARN')).toEqual([]);
  });

  it('malformed CSV fails with the parser\'s reason (or is skipped with onBadLines: SKIP)', async () => {
    const r = (await convert(csvToIon, {}, 'a,b\n1,"open\n')).r;
    expect(r.state).toBe('FAILED');
    expect(r.error).toMatch(/Malformed CSV.*quote/i);
    expect((await convert(csvToIon, {}, 'a,b\n"x"y,2\n')).r.error).toMatch(/Malformed CSV/);
    expect(plain(await (await convert(csvToIon, { allowExtraCharsAfterClosingQuote: true }, 'a,b\n"x"y,2\n')).rows())).toEqual([{ a: '"x"y', b: '2' }]); // the field as written
  });

  it('a huge record fails naming STORAGE_MAX_ITEM_BYTES, a long field naming maxFieldSize', async () => {
    process.env.STORAGE_MAX_ITEM_BYTES = '4096';
    const huge = `a\n"${'x'.repeat(10_000)}\n`; // an unterminated quote must not swallow the file
    const r = (await convert(csvToIon, {}, huge)).r;
    expect(r.error).toMatch(/STORAGE_MAX_ITEM_BYTES/);
    expect((await convert(csvToIon, { maxBufferSize: 100 }, `a\n${'y'.repeat(200)}\n`)).r.error).toMatch(/property 'maxBufferSize'/);
    expect((await convert(csvToIon, { maxFieldSize: 10 }, `a\n${'y'.repeat(20)}\n`)).r.error).toMatch(/maxFieldSize/);
  });
});

describe('namespace isolation', () => {
  it('a file of another namespace cannot be read (the scoped storage refuses it)', async () => {
    const t = makeTestContext({ task: { id: 'conv', type: csvToIon.type } });
    try {
      const other = await t.stores.storage.put('other/secret/flow9/executions/e9/data.csv', Buffer.from('a\n1\n'));
      t.ctx.task = { id: 'conv', type: csvToIon.type, from: other };
      const r = await csvToIon.runnable.run(t.ctx);
      expect(r.state).toBe('FAILED');
      expect(r.error).toMatch(/namespace|not allowed|denied|forbidden/i);
    } finally {
      await t.cleanup();
    }
  });
});

describe('IonToCsv', () => {
  it('writes the first row\'s keys as header and values as records, quoting as needed', async () => {
    const ion = '{id:1,name:"Ann",note:"a, \\"q\\""}\n{id:2,name:"Bob",note:null}\n';
    const c = await convert(ionToCsv, {}, ion);
    expect(c.r.metrics).toEqual([{ name: 'records', type: 'counter', value: 2 }]);
    expect(await c.text()).toBe('id,name,note\n1,Ann,"a, ""q"""\n2,Bob,\n');
    expect(await (await convert(ionToCsv, { quoteMode: 'ALWAYS', lineDelimiter: '\r\n' }, ion)).text()).toBe('"id","name","note"\r\n"1","Ann","a, ""q"""\r\n"2","Bob",\r\n');
    expect(await (await convert(ionToCsv, { quoteMode: 'NON_NUMERIC', header: false }, '{a:1,b:"x",c:-2.5}\n')).text()).toBe('1,"x",-2.5\n');
    expect(await (await convert(ionToCsv, { alwaysDelimitText: true, header: false, fieldSeparator: ';' }, '{a:1,b:"x"}\n')).text()).toBe('"1";"x"\n');
  });

  it('lists need header: false; dates and date-times use the formats; nested values are JSON', async () => {
    expect((await convert(ionToCsv, {}, '[1,2]\n')).r.error).toMatch(/List with header/);
    const ion = '{d:2024-01-31,t:2024-01-31T10:20:30.456Z,local:2024-01-31T10:20:30-00:00,n:{a:[1]}}\n';
    expect(await (await convert(ionToCsv, { header: false, timeZoneId: 'Europe/Paris' }, ion)).text()).toBe('2024-01-31,2024-01-31T10:20:30.456Z,2024-01-31T10:20:30.000+01:00,"{""a"":[1]}"\n');
    expect(await (await convert(ionToCsv, { header: false, dateFormat: 'dd/MM/yyyy', dateTimeFormat: 'yyyy-MM-dd HH:mm' }, ion)).text()).toMatch(/^31\/01\/2024,2024-01-31 10:20,/);
    expect((await convert(ionToCsv, { timeZoneId: 'Mars/Base' }, ion)).r.error).toMatch(/timeZoneId/);
  });

  it('round trip CSV → ION → CSV keeps the file (charset latin1 too)', async () => {
    const back = await convert(ionToCsv, {}, await convert(csvToIon, {}, CSV));
    expect(await back.text()).toBe(CSV.replace('\\N', ''));
    const latin = await convert(ionToCsv, { charset: 'ISO-8859-1' }, '{name:"café"}\n');
    expect((await latin.bytes()).toString('latin1')).toBe('name\ncafé\n');
  });
});
