// Unit tables for structured output: schema -> grammar subset (with demo caps) and answer validation.
import { describe, expect, it } from 'vitest';
import { checkAnswer, grammarSchemaFor } from './structured.js';

describe('grammarSchemaFor', () => {
  it('caps strings and arrays for the demo model only', () => {
    const s = { type: 'object', properties: { t: { type: 'string' }, l: { type: 'array', items: { type: 'integer' } } }, required: ['t'] };
    expect(grammarSchemaFor(s, true)).toEqual({
      type: 'object', required: ['t'],
      properties: { t: { type: 'string', maxLength: 24 }, l: { type: 'array', items: { type: 'integer' }, maxItems: 3 } },
    });
    expect(grammarSchemaFor(s, false)).toEqual({ type: 'object', required: ['t'], properties: { t: { type: 'string' }, l: { type: 'array', items: { type: 'integer' } } } });
  });
  it('turns a small integer range into an enum', () => {
    expect(grammarSchemaFor({ type: 'integer', minimum: 1, maximum: 3 }, false)).toEqual({ enum: [1, 2, 3] });
    expect(grammarSchemaFor({ type: 'integer', minimum: 0, maximum: 1e6 }, false)).toEqual({ type: 'integer' });
  });
  it.each([
    [{ type: 'integer', exclusiveMinimum: 0, exclusiveMaximum: 4 }, { enum: [1, 2, 3] }],
    [{ type: 'integer', minimum: 0, maximum: 1000, multipleOf: 250 }, { enum: [0, 250, 500, 750, 1000] }],
    [{ type: 'integer', minimum: -1e9, maximum: 1e9, multipleOf: 1e7 }, { enum: Array.from({ length: 201 }, (_, i) => (i - 100) * 1e7) }],
    [{ type: 'number', minimum: 1, maximum: 5, multipleOf: 2 }, { enum: [2, 4] }],
    [{ type: 'number', minimum: 1, maximum: 5 }, { type: 'number' }],
    [{ type: 'integer', minimum: 1 }, { type: 'integer' }],
    [{ type: 'integer', minimum: 5, exclusiveMaximum: 5 }, { type: 'integer' }],
  ])('enforces the bounds of %j in the grammar where an enum can', (schema, grammar) => {
    expect(grammarSchemaFor(schema, false)).toEqual(grammar);
    // every value the grammar admits is valid against the schema
    for (const v of (grammar as { enum?: number[] }).enum ?? []) expect(checkAnswer(schema, JSON.stringify(v)).ok).toBe(true);
  });
  it.each([
    [{ allOf: [{ type: 'string' }] }],
    [{ type: 'object' }],
    [{}],
  ])('leaves %j to the generic JSON grammar', (s) => expect(grammarSchemaFor(s, false)).toBeUndefined());
});

describe('checkAnswer', () => {
  const schema = { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] };
  it.each([
    ['{"n": 3}', true],
    ['{"n": 1e2}', true],
    ['{"n": 1e-1}', false],
    ['{"n": "3"}', false],
    ['{"n": 3', false],
  ])('%s -> %s', (text, ok) => expect(checkAnswer(schema, text).ok).toBe(ok));
});
