// jq runs sandboxed: nothing before initExpressions(), an empty environment, the injected clock, no host output,
// bounded time, output and memory, and a fresh instance after any failure (later calls answer correctly).
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { LimitError } from '../core/limits.js';
import { createRenderer, ExpressionError, initExpressions } from './index.js';

const NOW = new Date('2020-01-01T00:00:00Z');
const r = createRenderer({ now: () => NOW }, { timeoutMs: 300 });
const jq = (query: string, input = '{}'): unknown => r.renderTyped(`{{ ${input} | jq(${JSON.stringify(query)}) }}`, {});

it('before initExpressions() has loaded jq, jq() fails with a clear error', () => {
  expect(() => jq('.')).toThrow(ExpressionError);
  expect(() => jq('.')).toThrow('jq is not available yet: initExpressions() must load it');
});

describe('after initExpressions()', () => {
  beforeAll(async () => {
    await initExpressions();
  });
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it('answers queries', () => {
    expect(jq('.a[] | select(. > 1)', '{"a": [1, 2, 3]}')).toEqual([2, 3]);
    expect(jq('.x', "'{\"x\": \"from a JSON string\"}'")).toEqual(['from a JSON string']);
  });

  it('sees an empty environment: $ENV and env are {}', () => {
    expect(jq('$ENV')).toEqual([{}]);
    expect(jq('env')).toEqual([{}]);
    expect(jq('$ENV.PATH, $ENV.HOME, $ENV._')).toEqual([null, null, null]);
  });

  it('reads time from the injected clock, in UTC', () => {
    expect(jq('now')).toEqual([NOW.getTime() / 1000]);
    expect(jq('now | todate')).toEqual(['2020-01-01T00:00:00Z']);
    expect(jq('now | localtime | mktime')).toEqual([NOW.getTime() / 1000]);
    expect(jq('now | strflocaltime("%Y-%m-%d %H:%M")')).toEqual(['2020-01-01 00:00']);
  });

  it('cannot print to the server: debug, stderr and errors stay inside', () => {
    const writes = [vi.spyOn(process.stderr, 'write'), vi.spyOn(process.stdout, 'write'),
      vi.spyOn(console, 'warn'), vi.spyOn(console, 'error'), vi.spyOn(console, 'log')];
    expect(jq('debug | stderr | 1')).toEqual([1]);
    expect(() => jq('"boom" | halt_error')).toThrow('jq: boom');
    for (const spy of writes) expect(spy).not.toHaveBeenCalled();
  });

  it.each([
    ['import', 'import "etc/passwd" as $p; $p', 'module not found'],
    ['include', 'include "x"; 1', 'module not found'],
    ['input', 'input', 'jq: error (at <unknown>): break'],
    ['options in the query', '--rawfile', 'rawfile/0 is not defined'],
  ])('%s reaches nothing outside its input', (_name, query, message) => {
    expect(() => jq(query)).toThrow(message);
  });

  it('input_filename, $__loc__ and get_search_list reveal nothing of the host', () => {
    expect(jq('[input_filename, $__loc__, get_search_list]')).toEqual([
      ['inputString', { file: '<top-level>', line: 1 }, ['~/.jq', '$ORIGIN/../lib/jq', '$ORIGIN/../lib']],
    ]);
  });

  it('a timed-out call is followed by correct answers', () => {
    const start = performance.now();
    expect(() => jq('last(repeat(1))')).toThrow(LimitError);
    expect(performance.now() - start).toBeLessThan(600);
    for (let i = 0; i < 3; i++) expect(jq(`.a + ${i}`, '{"a": 1}')).toEqual([1 + i]);
  });

  it('bounds output by the size budget', () => {
    const small = createRenderer({}, { timeoutMs: 5_000, maxBytes: 64 * 1024 });
    const start = performance.now();
    let error: unknown;
    try {
      small.render("{{ {} | jq('repeat(\"xxxxxxxxxxxxxxxx\")') }}", {});
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(LimitError);
    expect((error as LimitError).setting).toBe('EXPRESSION_MAX_BYTES');
    expect(performance.now() - start).toBeLessThan(2_000);
    expect(small.render("{{ {\"a\": 2} | jq('.a') | first }}", {})).toBe('2');
  });

  it('bounds memory: 20 hostile calls leave the process RSS within 150 MiB of where it started', () => {
    const hostile = ['[limit(100000000; repeat(1))] | length', '"x" * 1000000000 | length', 'last(repeat(1))', '[range(100000000)]'];
    const short = createRenderer({}, { timeoutMs: 150 });
    expect(jq('.a', '{"a": 0}')).toEqual([0]);
    const before = process.memoryUsage().rss;
    for (let i = 0; i < 20; i++) {
      expect(() => short.render(`{{ {} | jq('${hostile[i % hostile.length]}') }}`, {})).toThrow(LimitError);
    }
    expect(process.memoryUsage().rss - before).toBeLessThan(150 * 1024 * 1024);
    expect(jq('.a', '{"a": 7}')).toEqual([7]);
  });

  it('a heap request over 16 x the size limit is refused, naming EXPRESSION_MAX_BYTES', () => {
    expect(() => jq('"x" * 1000000000 | length')).toThrow('setting EXPRESSION_MAX_BYTES');
  });
});
