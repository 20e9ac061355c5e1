// Tables of the JSON schema -> GBNF converter: the grammar text, and strings that llama.cpp's own grammar engine
// (node-llama-cpp's native matcher) must accept or reject; every accepted string is also valid for ajv.
import { beforeAll, describe, expect, it } from 'vitest';
import type { Llama } from 'node-llama-cpp';
import { sharedLlama } from './backends/llama.js';
import { GRAMMAR_END, MAX_DEPTH, schemaToGbnf, type GbnfOptions } from './gbnf.js';
import { integerRange, numberRange, type Bounds } from './gbnf-numbers.js';
import { checkAnswer } from './structured.js';

let llama: Llama;
beforeAll(async () => { llama = await sharedLlama(1); });

const OPTS: GbnfOptions = { demo: false, maxSize: 20_000 };

/** Whole-text match by llama.cpp's grammar engine (the native `isTextCompatible` behind node-llama-cpp 3.21.1's internal `_testText`). */
async function matcher(grammar: string): Promise<(text: string) => boolean> {
  const g = await llama.createGrammar({ grammar });
  return (text) => (g as unknown as { _testText(t: string): boolean })._testText(text);
}

async function grammarOf(schema: object, opts = OPTS): Promise<{ accepts: (json: string) => boolean; text: string; relaxed: string[] }> {
  const r = schemaToGbnf(schema as Record<string, unknown>, opts);
  if (!r.ok) throw new Error(r.reason);
  const m = await matcher(r.grammar);
  return { accepts: (json) => m(json + GRAMMAR_END), text: r.grammar, relaxed: r.relaxed };
}

const UUID = '"123e4567-e89b-12d3-a456-426614174000"';

describe('schemaToGbnf: accepted and rejected answers', () => {
  it.each<[string, object, string[], string[]]>([
    ['a pattern', { type: 'string', pattern: '^[A-Z]{3}-[0-9]{2}$' }, ['"ABC-12"', '"ZZZ-00"'], ['"AB-12"', '"abc-12"', '"ABC-123"', '"ABC-12x"']],
    ['groups, alternation, ? + {n,m}', { type: 'string', pattern: '^(ab|c)+x?[0-9]{1,3}$' }, ['"abc1"', '"cx123"', '"ababc99"'], ['"x1"', '"ab1234"', '"abcx"']],
    ['escapes and \\d \\w \\s', { type: 'string', pattern: '^\\d\\w\\s\\.$' }, ['"1a ."', '"9_\\t."'], ['"1a x"', '"aa ."']],
    ['a negated class and .', { type: 'string', pattern: '^[^0-9]..$' }, ['"abc"', '"a\\\\b"'.replace('\\\\b', 'bc')], ['"1bc"', '"ab"']],
    ['quotes and backslashes in the pattern', { type: 'string', pattern: '^a"\\\\$' }, ['"a\\"\\\\"'], ['"a\\"b"', '"a"']],
    ['an unanchored pattern (search semantics)', { type: 'string', pattern: '[0-9]{2}' }, ['"xx42yy"', '"42"'], ['"x4y2"']],
    ['anchors per alternative', { type: 'string', pattern: '^a|b$' }, ['"azz"', '"zzb"'], ['"zaz"']],
    ['minLength/maxLength', { type: 'string', minLength: 2, maxLength: 3 }, ['"ab"', '"a\\nc"'], ['"a"', '"abcd"']],
    ['date', { type: 'string', format: 'date' }, ['"2024-02-28"', '"1999-12-31"'], ['"2024-02-30"', '"2024-13-01"', '"2024-04-31"']],
    ['time', { type: 'string', format: 'time' }, ['"23:59:59Z"', '"08:00:00.250+02:00"'], ['"24:00:00Z"', '"12:00:00"']],
    ['date-time', { type: 'string', format: 'date-time' }, ['"2026-11-25T06:56:40Z"', '"2026-01-31T00:00:00.5-05:30"'], ['"2026-11-25 06:56:40Z"']],
    ['uuid', { type: 'string', format: 'uuid' }, [UUID], ['"123e4567-e89b-12d3-a456-42661417400"', '"123e4567e89b12d3a456426614174000"']],
    ['email', { type: 'string', format: 'email' }, ['"jo.doe@mail.example.com"', '"a+b@x.io"'], ['"a@b"', '"@x.io"', '"a b@x.io"']],
    ['ipv4', { type: 'string', format: 'ipv4' }, ['"192.168.0.255"', '"0.0.0.0"'], ['"256.1.1.1"', '"01.1.1.1"', '"1.1.1"']],
    ['uri', { type: 'string', format: 'uri' }, ['"https://example.com/a/b?x=1"', '"http://localhost"'], ['"example.com"', '"ftp://x"']],
    ['an integer range of any width', { type: 'integer', minimum: 1000, maximum: 250000 }, ['1000', '250000', '99999', '100000'], ['999', '250001', '0', '-1000', '1e3', '01000']],
    ['exclusive bounds', { type: 'integer', exclusiveMinimum: -3, exclusiveMaximum: 3 }, ['-2', '0', '2'], ['-3', '3', '-0']],
    ['bounds without a type', { maximum: -1 }, ['-1', '-7.5'], ['0', '"x"']],
    ['a one-sided bound', { type: 'integer', minimum: 17 }, ['17', '99', '123456789012'], ['16', '-17', '9']],
    ['multipleOf', { type: 'integer', minimum: 0, maximum: 1000, multipleOf: 250 }, ['0', '750', '1000'], ['100', '1250']],
    ['a number range', { type: 'number', minimum: -2, maximum: 3.5 }, ['3', '2.75', '-2', '-1.5', '0.001'], ['3.6', '4', '-2.5', '-3']],
    ['enum and const', { enum: ['a', 1, null, { k: [true] }] }, ['"a"', '1', 'null', '{"k":[true]}'], ['"b"', '2']],
    ['a nullable type', { type: ['integer', 'null'], minimum: 5, maximum: 6 }, ['5', 'null'], ['7', '"x"']],
    ['an array with bounds', { type: 'array', items: { type: 'boolean' }, minItems: 1, maxItems: 2 }, ['[true]', '[true, false]'], ['[]', '[true,true,true]', '[1]']],
    ['a tuple', { type: 'array', items: [{ type: 'integer' }, { type: 'string' }], additionalItems: false }, ['[1, "a"]'], ['[1]', '["a", 1]', '[1, "a", 2]']],
    ['required and optional properties', {
      type: 'object', additionalProperties: false,
      properties: { id: { type: 'string', format: 'uuid' }, n: { type: 'integer' }, ok: { type: 'boolean' } }, required: ['id', 'ok'],
    }, [`{"id": ${UUID}, "ok": true}`, `{"id":${UUID},"n":3,"ok":false}`, `{\n  "id": ${UUID},\n  "ok": true\n}`],
    [`{"n": 3, "ok": true}`, `{"id": ${UUID}}`, `{"id": ${UUID}, "ok": true, "x": 1}`, `{"id": ${UUID}, "ok": true, "ok": true}`]],
    ['all properties optional', { type: 'object', properties: { a: { type: 'null' }, b: { type: 'null' } } }, ['{}', '{"b": null}', '{"a": null, "b": null}'], ['{"b": null, "a": null}']],
    ['additionalProperties with a schema', { type: 'object', additionalProperties: { type: 'integer' } }, ['{}', '{"x": 1, "y": 2}'], ['{"x": "1"}']],
    ['$ref/$defs, recursive', {
      $defs: { node: { type: 'object', properties: { v: { type: 'integer' }, next: { anyOf: [{ type: 'null' }, { $ref: '#/$defs/node' }] } }, required: ['v', 'next'] } },
      $ref: '#/$defs/node',
    }, ['{"v": 1, "next": {"v": 2, "next": null}}'], ['{"v": 1}', '{"v": 1, "next": 2}']],
    ['oneOf', { oneOf: [{ type: 'string', format: 'ipv4' }, { type: 'integer', minimum: 0, maximum: 9 }] }, ['"1.2.3.4"', '7'], ['10', '"x"']],
  ])('%s', async (_name, schema, good, bad) => {
    const g = await grammarOf(schema);
    for (const t of good) {
      expect(g.accepts(t), `${t} accepted`).toBe(true);
      expect(checkAnswer(schema as Record<string, unknown>, t), `${t} valid`).toMatchObject({ ok: true });
    }
    for (const t of bad) expect(g.accepts(t), `${t} rejected`).toBe(false);
  });

  it('writes digit-range rules for integer bounds', async () => {
    const g = await grammarOf({ type: 'integer', minimum: 1000, maximum: 250000 });
    expect(g.text).toContain('integer-1000-250000 ::= ([1-9] [0-9]{3}) | ([1-9] [0-9]{4}) | ("2" ("5" ("0000") | [0-4] [0-9]{4}) | "1" [0-9]{5})');
    expect(g.relaxed).toEqual([]);
  });

  it('lists nothing when a pattern implies the lengths', async () => {
    expect((await grammarOf({ type: 'string', minLength: 3, maxLength: 6, pattern: '^[A-Z]{3}-[0-9]{2}$' })).relaxed).toEqual([]);
  });
});

describe('integer and number ranges against every value nearby', () => {
  it.each([[0n, 0n], [-5n, 5n], [7n, 123n], [-130n, -9n], [95n, 1005n], [-1n, 0n]])('[%s, %s]', async (lo, hi) => {
    const m = await matcher(`root ::= ${integerRange(lo, hi)}`);
    for (let v = lo - 30n; v <= hi + 30n; v++) expect(m(String(v)), String(v)).toBe(v >= lo && v <= hi);
  });
  it('opens a side beyond 16 digits and refuses an empty range', () => {
    expect(integerRange(10n ** 20n, undefined)).toBeUndefined();
    expect(integerRange(3n, 2n)).toBeUndefined();
    expect(integerRange(0n, 10n ** 30n)).toBe(integerRange(0n, undefined));
  });
  it.each<[Bounds]>([
    [{ min: 0.5, max: 2.5 }], [{ min: -1, max: 1, exclusiveMin: true, exclusiveMax: true }], [{ min: -7.25, max: -2 }], [{ max: 0 }],
  ])('%j admits only numbers inside', async (b) => {
    const m = await matcher(`root ::= ${numberRange(b)}`);
    const inside = (x: number): boolean => (b.min === undefined || (b.exclusiveMin ? x > b.min : x >= b.min)) && (b.max === undefined || (b.exclusiveMax ? x < b.max : x <= b.max));
    for (let x = -9; x <= 9; x += 0.25) for (const t of [String(x), x.toFixed(2)]) if (m(t)) expect(inside(Number(t)), t).toBe(true);
    expect(numberRange({ min: 2, max: 1 })).toBeUndefined();
  });
});

describe('schemaToGbnf: what is relaxed, capped or refused', () => {
  it.each<[object, string]>([
    [{ type: 'string', pattern: '^(?=a)\\w+$' }, '/: pattern (lookarounds and named groups)'],
    [{ type: 'string', pattern: '^(a)\\1$' }, '/: pattern (the escape \\1)'],
    [{ type: 'string', pattern: '\\bword' }, '/: pattern (the escape \\b)'],
    [{ type: 'string', format: 'hostname' }, '/: format hostname'],
    [{ type: 'object', properties: { a: { type: 'string', minLength: 2, pattern: '^[a-z]+$' } } }, '/properties/a: minLength/maxLength beside pattern (the pattern is enforced)'],
    [{ type: 'array', items: { type: 'integer' }, uniqueItems: true }, '/: uniqueItems'],
    [{ allOf: [{ type: 'string' }] }, '/: allOf'],
    [{ type: 'string', maxLength: 5000 }, '/: maxLength above 1000'],
    [{ $defs: { d: { type: 'string' } }, $ref: '#/$defs/d', maxLength: 2 }, '/: $ref beside other keywords (the $ref is enforced)'],
  ])('%j keeps its type grammar and lists %s', async (schema, note) => {
    const g = await grammarOf(schema);
    expect(g.relaxed).toContain(note);
  });
  it('relaxes an unsupported pattern to a plain string, keeping the lengths', async () => {
    const g = await grammarOf({ type: 'string', pattern: '^(?!x)', maxLength: 3 });
    expect(g.accepts('"abc"')).toBe(true);
    expect(g.accepts('"abcd"')).toBe(false);
  });
  it('caps strings, arrays and open repetitions for the demo model only', async () => {
    const schema = { type: 'object', properties: { t: { type: 'string' }, p: { type: 'string', pattern: '^a+$' }, l: { type: 'array', items: { type: 'integer' } } }, required: ['t', 'p', 'l'] };
    const demo = await grammarOf(schema, { ...OPTS, demo: true });
    const real = await grammarOf(schema);
    const doc = (t: number, p: number, l: number): string => JSON.stringify({ t: 'x'.repeat(t), p: 'a'.repeat(p), l: Array(l).fill(1) });
    expect(demo.accepts(doc(24, 24, 3))).toBe(true);
    for (const d of [doc(25, 1, 1), doc(1, 25, 1), doc(1, 1, 4)]) {
      expect(demo.accepts(d)).toBe(false);
      expect(real.accepts(d)).toBe(true);
    }
  });
  it('refuses a grammar over the size limit, and one nested too deep', () => {
    const wide = { type: 'object', properties: Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`p${i}`, { type: 'string', pattern: '^[a-z]{900,1000}$' }])) };
    const t = schemaToGbnf(wide, OPTS);
    expect(t).toEqual({ ok: false, reason: expect.stringContaining('exceed 20000 elements') });
    let deep: Record<string, unknown> = { type: 'integer' };
    for (let i = 0; i <= MAX_DEPTH; i++) deep = { type: 'array', items: deep };
    expect(schemaToGbnf(deep, OPTS).ok).toBe(false);
    expect(schemaToGbnf({ type: 'string', pattern: '^[a-z]{900,1000}$' }, { ...OPTS, maxSize: 100 }).ok).toBe(false);
    expect(schemaToGbnf({ type: 'string', pattern: '^[a-z]{900,1000}$' }, OPTS).ok).toBe(true);
  });
  it('relaxes a pattern nested too deep and leaves the schema untouched', async () => {
    const g = await grammarOf({ type: 'string', pattern: `^${'('.repeat(5000)}a${')'.repeat(5000)}$` });
    expect(g.relaxed).toEqual(['/: pattern (groups nested deeper than 64)']);
    const schema = { type: 'object', properties: { a: { type: 'integer' } }, required: ['a', 'b'] };
    const before = JSON.stringify(schema);
    expect((await grammarOf(schema)).accepts('{"a": 1, "b": [null]}')).toBe(true);
    expect(JSON.stringify(schema)).toBe(before);
  });
});
