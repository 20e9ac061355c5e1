// Tests of the ION row codec: Kestra's Ion text read (symbols, timestamps, decimals, blobs, annotations, comments),
// JSON-first writing, round trips, line limits and malformed lines naming their line.
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { IonDecimal, IonTimestamp, ionText, parseIon, parseIonValues, readIonRows } from './ion.js';

const plain = (v: unknown): unknown => JSON.parse(JSON.stringify(v));

describe('parseIon', () => {
  it('reads the Ion text Kestra writes: unquoted field names, timestamps, decimals, floats, typed nulls', () => {
    const v = parseIon('{id:1,name:"Ann",born:1990-05-01,at:2024-01-31T10:00:00.123Z,amount:12.50,ratio:1.5e0,none:null.string,ok:true,big:123456789012345678901234.5}') as Record<string, unknown>;
    expect(v.id).toBe(1);
    expect(v.name).toBe('Ann');
    expect(v.born).toBeInstanceOf(IonTimestamp);
    expect((v.born as IonTimestamp).dateOnly).toBe(true);
    expect((v.at as IonTimestamp).text).toBe('2024-01-31T10:00:00.123Z');
    expect((v.at as IonTimestamp).hasOffset).toBe(true);
    expect(v.amount).toBe(12.5);
    expect(v.ratio).toBe(1.5);
    expect(v.none).toBeNull();
    expect(v.ok).toBe(true);
    expect(v.big).toBeInstanceOf(IonDecimal);
    expect(Object.getPrototypeOf(v)).toBeNull();
  });

  it('reads strings, quoted symbols, long strings, escapes, blobs, clobs, lists, s-expressions, annotations, comments', () => {
    expect(parseIon(`{'a b':'''x''' '''y''', "c\\u00e9":"\\x41\\n", blob:{{aGk=}}, clob:{{"text"}}, l:[1,'s',sym], s:(+ 1 2), ann:money::42 /* note */} // end`, 'plain')).toEqual({
      'a b': 'xy', 'cé': 'A\n', blob: 'aGk=', clob: 'text', l: [1, 's', 'sym'], s: ['+', 1, 2], ann: 42,
    });
    expect(Buffer.from(parseIon('{{aGk=}}') as Uint8Array).toString()).toBe('hi');
    expect(parseIonValues('1 2 "three"')).toEqual([1, 2, 'three']);
    expect(parseIon('0x1F')).toBe(31);
    expect(parseIon('-1_000')).toBe(-1000);
    expect(parseIon('+inf')).toBe(Infinity);
    expect(Number.isNaN(parseIon('nan'))).toBe(true);
  });

  it('plain mode gives JSON-like values (timestamps as text)', () => {
    expect(parseIon('{d:2024-01-31,t:2024-01-31T10:00Z,b:123456789012345678.5}', 'plain')).toEqual({ d: '2024-01-31', t: '2024-01-31T10:00Z', b: 123456789012345680 });
  });

  it('refuses malformed text, naming the column', () => {
    expect(() => parseIon('{a:1')).toThrow(/column/);
    expect(() => parseIon('{a 1}')).toThrow(/Expected ':'/);
    expect(() => parseIon('"open')).toThrow(/Unterminated string/);
    expect(() => parseIon('2024-13')).not.toThrow(); // the shape is checked, not the calendar
    expect(() => parseIon('2024-01-01T1')).toThrow(/Bad timestamp/);
    expect(() => parseIon('['.repeat(500))).toThrow(/nested deeper/);
    expect(() => parseIon('1, 2')).toThrow(/Unexpected ','/);
  });

  it('a key __proto__ stays a key', () => {
    const v = parseIon('{"__proto__":{"polluted":1}}') as Record<string, unknown>;
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.keys(v)).toEqual(['__proto__']);
  });
});

describe('ionText', () => {
  it('writes JSON where JSON can hold the value, Ion where it cannot, and reads back the same', () => {
    const row = { s: 'a"b\n', n: 1, f: 1.25, b: false, z: null, list: [1, 'x'], nested: { k: 'v' },
      ts: new IonTimestamp('2024-01-31T10:00:00.000Z'), day: new IonTimestamp('2024-01-31'), dec: new IonDecimal('12345678901234567890.12'),
      blob: Buffer.from('hi'), inf: -Infinity };
    const text = ionText(row);
    expect(text).toBe('{"s":"a\\"b\\n","n":1,"f":1.25,"b":false,"z":null,"list":[1,"x"],"nested":{"k":"v"},"ts":2024-01-31T10:00:00.000Z,"day":2024-01-31,"dec":12345678901234567890.12,"blob":{{aGk=}},"inf":-inf}');
    const back = parseIon(text) as Record<string, unknown>;
    expect(ionText(back)).toBe(text);
    expect(ionText({ a: 1, b: [true] })).toBe(JSON.stringify({ a: 1, b: [true] }));
    expect(ionText(new Date('2024-01-01T00:00:00Z'))).toBe('2024-01-01T00:00:00.000Z');
  });
});

describe('readIonRows', () => {
  it('streams rows line by line, skipping blank lines, across chunk boundaries', async () => {
    const text = '{a:1}\n\n{"a":2}\r\n{a:3}';
    const chunks = [...text].map((c) => Buffer.from(c));
    const rows: unknown[] = [];
    for await (const r of readIonRows(Readable.from(chunks), { storageMaxItemBytes: 1024 }, 'test')) rows.push(plain(r));
    expect(rows).toEqual([{ a: 1 }, { a: 2 }, { a: 3 }]);
  });

  it('names the line of a malformed row and refuses a line over STORAGE_MAX_ITEM_BYTES', async () => {
    const read = async (text: string, max = 1024) => { for await (const _ of readIonRows(Readable.from([Buffer.from(text)]), { storageMaxItemBytes: max }, 'rows.ion')) { /* drain */ } };
    await expect(read('{a:1}\n{a:\n')).rejects.toThrow(/rows.ion: line 2 is not an Ion value/);
    await expect(read(`{"a":"${'x'.repeat(2000)}"}\n`)).rejects.toThrow(/STORAGE_MAX_ITEM_BYTES/);
  });
});
