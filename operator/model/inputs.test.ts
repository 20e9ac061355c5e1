// Tests of resolveInputs: coercion of every input type, defaults, required/optional, and collected errors.
import { describe, expect, it } from 'vitest';
import type { Input } from '../core/types.js';
import { InputValidationError } from './errors.js';
import { resolveInputs } from './inputs.js';

/** Coerces one value; FILE URIs pass a rule that accepts everything (the rules themselves are tested below). */
const resolveOne = (def: Omit<Input, 'id'>, value: unknown): unknown =>
  resolveInputs([{ id: 'x', ...def } as Input], value === undefined ? {} : { x: value }, { fileUri: () => undefined }).x;

function errorOf(def: Omit<Input, 'id'>, value: unknown): string {
  try {
    resolveOne(def, value);
  } catch (err) {
    expect(err).toBeInstanceOf(InputValidationError);
    const e = err as InputValidationError;
    expect(e.errors[0].path).toBe('inputs.x');
    return e.errors[0].message;
  }
  throw new Error('input was accepted');
}

describe('resolveInputs coercion', () => {
  it.each<[string, Omit<Input, 'id'>, unknown, unknown]>([
    ['STRING', { type: 'STRING' }, 'hello', 'hello'],
    ['STRING from number', { type: 'STRING' }, 42, '42'],
    ['STRING empty', { type: 'STRING' }, '', ''],
    ['STRING validator', { type: 'STRING', validator: '[a-z]+' }, 'abc', 'abc'],
    ['INT string', { type: 'INT' }, '42', 42],
    ['INT number', { type: 'INT' }, -7, -7],
    ['INT in range', { type: 'INT', min: 1, max: 10 }, '10', 10],
    ['FLOAT string', { type: 'FLOAT' }, '3.14', 3.14],
    ['FLOAT integer', { type: 'FLOAT' }, 2, 2],
    ['FLOAT exponent', { type: 'FLOAT' }, '1e3', 1000],
    ['BOOLEAN string', { type: 'BOOLEAN' }, 'true', true],
    ['BOOLEAN FALSE', { type: 'BOOLEAN' }, 'FALSE', false],
    ['BOOLEAN native', { type: 'BOOLEAN' }, false, false],
    ['ENUM', { type: 'ENUM', values: ['A', 'B'] }, 'B', 'B'],
    ['DATETIME Z', { type: 'DATETIME' }, '2024-01-31T10:00:00Z', '2024-01-31T10:00:00Z'],
    ['DATETIME offset', { type: 'DATETIME' }, '2024-01-31T12:00:00+02:00', '2024-01-31T10:00:00Z'],
    ['DATETIME millis', { type: 'DATETIME' }, '2024-01-31T10:00:00.123Z', '2024-01-31T10:00:00.123Z'],
    ['DATETIME no zone = UTC', { type: 'DATETIME' }, '2024-01-31T10:00:00', '2024-01-31T10:00:00Z'],
    ['DATETIME min', { type: 'DATETIME', min: '2024-01-01T00:00:00Z' }, '2024-01-01T00:00:00Z', '2024-01-01T00:00:00Z'],
    ['DATE', { type: 'DATE' }, '2024-02-29', '2024-02-29'],
    ['DATE max', { type: 'DATE', max: '2024-12-31' }, '2024-12-31', '2024-12-31'],
    ['TIME HH:mm', { type: 'TIME' }, '10:15', '10:15'],
    ['TIME HH:mm:ss', { type: 'TIME', min: '08:00', max: '18:00' }, '10:15:30', '10:15:30'],
    ['DURATION', { type: 'DURATION' }, 'PT5M', 'PT5M'],
    ['DURATION range', { type: 'DURATION', min: 'PT1M', max: 'PT1H' }, 'PT30M', 'PT30M'],
    ['JSON text', { type: 'JSON' }, '{"a":[1,2]}', { a: [1, 2] }],
    ['JSON object', { type: 'JSON' }, { a: 1 }, { a: 1 }],
    ['JSON list text', { type: 'JSON' }, '[1]', [1]],
    ['URI', { type: 'URI' }, 'https://example.com/a?b=c', 'https://example.com/a?b=c'],
    ['URI s3', { type: 'URI' }, 's3://bucket/key', 's3://bucket/key'],
    ['SECRET', { type: 'SECRET' }, 's3cr3t', 's3cr3t'],
    ['FILE', { type: 'FILE' }, 'kestra:///ns/flow/executions/e/inputs/x/file.txt', 'kestra:///ns/flow/executions/e/inputs/x/file.txt'],
    ['ARRAY JSON', { type: 'ARRAY', itemType: 'INT' }, '[1, "2"]', [1, 2]],
    ['ARRAY comma list', { type: 'ARRAY', itemType: 'STRING' }, 'a, b,c', ['a', 'b', 'c']],
    ['ARRAY native', { type: 'ARRAY', itemType: 'BOOLEAN' }, [true, 'false'], [true, false]],
    ['ARRAY of ENUM', { type: 'ARRAY', itemType: 'ENUM', values: ['A', 'B'] }, ['A'], ['A']],
    ['ARRAY of DATETIME', { type: 'ARRAY', itemType: 'DATETIME' }, ['2024-01-01T01:00:00+01:00'], ['2024-01-01T00:00:00Z']],
  ])('%s', (_name, def, value, expected) => {
    expect(resolveOne(def, value)).toEqual(expected);
  });
});

describe('FILE inputs given as internal-storage URIs', () => {
  const defs = [{ id: 'f', type: 'FILE' }] as Input[];
  const uri = 'kestra:///ns/flow/executions/e/inputs/f/file.txt';
  it('are refused when the caller states no rule', () => {
    expect(() => resolveInputs(defs, { f: uri })).toThrow('inputs.f: internal-storage URIs are not accepted here: upload the file as a multipart file part');
  });
  it('follow the rule of whoever gives them, naming the input', () => {
    expect(resolveInputs(defs, { f: uri }, { fileUri: (u) => (u === uri ? undefined : 'no') })).toEqual({ f: uri });
    expect(() => resolveInputs(defs, { f: uri }, { fileUri: () => 'Reading it is not allowed' })).toThrow('inputs.f: Reading it is not allowed');
  });
});

describe('resolveInputs errors', () => {
  it.each<[string, Omit<Input, 'id'>, unknown, string]>([
    ['missing required', { type: 'STRING' }, undefined, 'Missing required input'],
    ['required: true explicit', { type: 'INT', required: true }, null, 'Missing required input'],
    ['empty INT counts as missing', { type: 'INT' }, '', 'Missing required input'],
    ['STRING from object', { type: 'STRING' }, { a: 1 }, 'must be a string'],
    ['STRING validator whole match', { type: 'STRING', validator: '[a-z]+' }, 'abc1', 'does not match the validator'],
    ['STRING validator on RE2: no catastrophic backtracking', { type: 'STRING', validator: '(a+)+$' }, `${'a'.repeat(50_000)}!`, 'does not match the validator'],
    ['STRING validator RE2 cannot run', { type: 'STRING', validator: '(?<=a)b' }, 'ab', 'is not a valid regular expression'],
    ['INT text', { type: 'INT' }, 'abc', 'not an integer'],
    ['INT decimal', { type: 'INT' }, '1.5', 'not an integer'],
    ['INT below min', { type: 'INT', min: 5 }, 4, 'less than the minimum `5`'],
    ['INT above max', { type: 'INT', max: 5 }, '6', 'greater than the maximum `5`'],
    ['FLOAT text', { type: 'FLOAT' }, '1.2.3', 'not a number'],
    ['FLOAT above max', { type: 'FLOAT', max: 1.5 }, 1.6, 'greater than the maximum'],
    ['BOOLEAN text', { type: 'BOOLEAN' }, 'yes', 'not a boolean'],
    ['ENUM other', { type: 'ENUM', values: ['A', 'B'] }, 'C', '`C` is not one of A, B'],
    ['DATETIME text', { type: 'DATETIME' }, 'yesterday', 'not an ISO 8601 date-time'],
    ['DATETIME date only', { type: 'DATETIME' }, '2024-01-01', 'not an ISO 8601 date-time'],
    ['DATETIME before min', { type: 'DATETIME', min: '2024-01-01T00:00:00Z' }, '2023-12-31T23:59:59Z', 'less than the minimum'],
    ['DATE invalid day', { type: 'DATE' }, '2023-02-29', 'not a date'],
    ['DATE format', { type: 'DATE' }, '31/01/2024', 'not a date'],
    ['DATE after max', { type: 'DATE', max: '2024-12-31' }, '2025-01-01', 'greater than the maximum'],
    ['TIME invalid', { type: 'TIME' }, '25:00', 'not a time'],
    ['TIME before min', { type: 'TIME', min: '08:00' }, '07:59:59', 'less than the minimum'],
    ['DURATION text', { type: 'DURATION' }, '5 minutes', 'not an ISO 8601 duration'],
    ['DURATION above max', { type: 'DURATION', max: 'PT1H' }, 'PT61M', 'greater than the maximum'],
    ['JSON invalid', { type: 'JSON' }, '{a:', 'not valid JSON'],
    ['URI relative', { type: 'URI' }, '/just/a/path', 'not a valid absolute URI'],
    ['URI garbage', { type: 'URI' }, 'not a uri', 'not a valid absolute URI'],
    ['FILE not stored', { type: 'FILE' }, '/tmp/file.txt', 'internal storage URI'],
    ['ARRAY bad item', { type: 'ARRAY', itemType: 'INT' }, '1,x', 'item 1: `x` is not an integer'],
    ['ARRAY not a list', { type: 'ARRAY', itemType: 'INT' }, { a: 1 }, 'not a list'],
    ['invalid defaults', { type: 'INT', defaults: 'abc' }, undefined, 'invalid default value'],
  ])('%s', (_name, def, value, reason) => {
    expect(errorOf(def, value)).toContain(reason);
  });
});

it('a SECRET input error never quotes the value', () => {
  expect(errorOf({ type: 'SECRET' }, { pw: 's3cr3t-value' })).toBe('must be a string, got an object');
  expect(errorOf({ type: 'ARRAY', itemType: 'SECRET' }, [['s3cr3t-value']])).toBe('item 0: must be a string, got a list');
});

describe('resolveInputs behaviour', () => {
  const defs: Input[] = [
    { id: 'name', type: 'STRING' },
    { id: 'count', type: 'INT', defaults: 3 },
    { id: 'optional', type: 'STRING', required: false },
    { id: 'when', type: 'DATETIME', required: false, defaults: '2024-01-01T01:00:00+01:00' },
    { id: 'cfg.nested', type: 'JSON', defaults: '{"a":1}' },
    { id: 'templ', type: 'STRING', defaults: '{{ now() }}' },
    { id: 'flag', type: 'BOOLEAN', required: false },
  ];

  it('applies defaults, nulls for optional inputs, keeps dotted ids and ignores undeclared keys', () => {
    expect(resolveInputs(defs, { name: 'world', extra: 'ignored', flag: 'true' })).toEqual({
      name: 'world',
      count: 3,
      optional: null,
      when: '2024-01-01T00:00:00Z',
      'cfg.nested': { a: 1 },
      templ: '{{ now() }}',
      flag: true,
    });
  });

  it('provided values win over defaults', () => {
    expect(resolveInputs(defs, { name: 'a', count: '7', 'cfg.nested': { b: 2 } })).toMatchObject({ count: 7, 'cfg.nested': { b: 2 } });
  });

  it('collects every error and names the first one', () => {
    try {
      resolveInputs(defs, { count: 'many', when: 'later' });
      expect.unreachable();
    } catch (err) {
      const e = err as InputValidationError;
      expect(e).toBeInstanceOf(InputValidationError);
      expect(e.errors.map((i) => i.path)).toEqual(['inputs.name', 'inputs.count', 'inputs.when']);
      expect(e.message).toBe('Invalid inputs: inputs.name: Missing required input (and 2 more errors)');
    }
  });

  it('JSON inputs and the result are prototype-free: a `__proto__` key of a value stays an ordinary key', () => {
    const result = resolveInputs([{ id: 'data', type: 'JSON' }], { data: '{"__proto__":{"polluted":true},"ok":1}' });
    expect(Object.getPrototypeOf(result)).toBeNull();
    expect(Object.getPrototypeOf(result.data)).toBeNull();
    expect(Object.keys(result.data as object)).toEqual(['__proto__', 'ok']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('accepts no declarations at all', () => {
    expect(resolveInputs(undefined, { a: 1 })).toEqual({});
  });
});
