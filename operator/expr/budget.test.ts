// The budget of one rendering: hostile templates end fast with a LimitError naming EXPRESSION_TIMEOUT_MS or
// EXPRESSION_MAX_BYTES (never swallowed by `??`, `default` or `is defined`), doubling attacks fail on size before
// they cost memory, legitimate large renders pass, and the settings are honoured.
import { beforeAll, describe, expect, it } from 'vitest';
import { LimitError, limitsFromEnv } from '../core/limits.js';
import { createRenderer, ExpressionError, initExpressions } from './index.js';

const TIME = 'EXPRESSION_TIMEOUT_MS';
const SIZE = 'EXPRESSION_MAX_BYTES';
const BUDGET_MS = 300;
const r = createRenderer({}, { timeoutMs: BUDGET_MS });
const MiB = 1024 * 1024;

/** Renders, expecting a LimitError of `setting`; returns the error and how long the render took. */
function limitOf(template: string, vars: Record<string, unknown> = {}, renderer = r): { error: LimitError; ms: number } {
  const start = performance.now();
  try {
    renderer.render(template, vars);
  } catch (error) {
    const ms = performance.now() - start;
    if (error instanceof LimitError) return { error, ms };
    throw error;
  }
  throw new Error(`rendered without reaching a limit: ${template}`);
}

const unrolled = (init: string, step: string, times: number, end: string): string => init + step.repeat(times) + end;

beforeAll(async () => {
  await initExpressions();
});

describe('time budget', () => {
  it.each([
    ['jq that never ends', "{{ {} | jq('last(repeat(1))') }}"],
    ['jq building a huge array', "{{ {} | jq('[limit(100000000; repeat(1))] | length') }}"],
    ['a long loop', '{% for i in range(1, 1000) %}{% for j in range(1, 999) %}{% set x = [i, j, i] | sort | join(",") | upper | sha256 %}{% endfor %}{% endfor %}'],
    ['jq inside nested render()', '{{ render(inner) }}'],
    ['a linear but slow regex over a long text', "{{ long | replace('(.*a){20}', 'x', true) | length }}"],
  ])('%s stops within 2x the budget, naming the setting', (_name, template) => {
    const vars = { inner: "{{ {} | jq('last(repeat(1))') }}", long: 'ab '.repeat(400_000) };
    const { error, ms } = limitOf(template, vars);
    expect(error.setting).toBe(TIME);
    expect(error.message).toContain(`over the limit of ${BUDGET_MS}`);
    expect(error.message).toContain(`setting ${TIME}`);
    expect(ms).toBeLessThan(2 * BUDGET_MS);
  });

  it('the catastrophic-backtracking pattern of the review runs in linear time and gives the right answer', () => {
    const start = performance.now();
    const out = r.render("{{ 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!' | replace({'(a+)+$':'x'}, regexp=true) }}", {});
    expect(out).toBe('aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!');
    expect(performance.now() - start).toBeLessThan(BUDGET_MS);
  });

  it('one budget covers a whole renderValue, not each string', () => {
    const slow = "{{ {} | jq('[limit(30000000; repeat(1))] | length') }}";
    const start = performance.now();
    expect(() => r.renderValue({ a: slow, b: [slow, slow], c: { d: slow } }, {})).toThrow(LimitError);
    expect(performance.now() - start).toBeLessThan(2 * BUDGET_MS);
  });
});

describe('size budget', () => {
  it.each([
    ['string doubling', unrolled("{% set s = 'ab' %}", '{% set s = s ~ s %}', 40, '{{ s | length }}')],
    ['string doubling with +', unrolled("{% set s = 'ab' %}", '{% set s = s + s %}', 40, '{{ s | length }}')],
    ['list doubling (shared, exponential JSON)', unrolled('{% set a = [1] %}', '{% set a = [a, a] %}', 60, '{{ a | length }}')],
    ['map doubling (shared, exponential JSON)', unrolled("{% set m = {'k': 'v'} %}", "{% set m = {'x': m, 'y': m} %}", 60, '{{ m | length }}')],
    ['merge doubling', unrolled('{% set l = [1, 2] %}', '{% set l = l | merge(l) %}', 60, '{{ l | length }}')],
    ['output of a loop', '{% for i in range(1, 100000) %}{{ s }}{% endfor %}'],
    ['regex replacement bomb', "{{ s | replace('', s, true) }}"],
    ['literal replacement bomb', "{{ s | replace('a', s) }}"],
    ['indent bomb', "{{ 'x' | indent(1000000000) }}"],
    ['capture bomb', '{% set c %}{% for i in range(1, 100000) %}{{ s }}{% endfor %}{% endset %}{{ c | length }}'],
  ])('%s fails on size, not on memory', (_name, template) => {
    // With a 1 MiB limit, the heap may grow by a small multiple of it (a list element costs 8 bytes for 2 of JSON).
    const oneMiB = createRenderer({}, { timeoutMs: 5_000, maxBytes: MiB });
    const heapBefore = process.memoryUsage().heapUsed;
    const { error } = limitOf(template, { s: 'a'.repeat(10_000) }, oneMiB);
    expect(error.setting).toBe(SIZE);
    expect(error.message).toContain(`over the limit of ${MiB}`);
    expect(error.message).toContain(`setting ${SIZE}`);
    expect(process.memoryUsage().heapUsed - heapBefore).toBeLessThan(32 * MiB);
  });

  it('a legitimate large render under the budget passes', () => {
    const big = 'x'.repeat(4 * MiB);
    expect(r.render('{{ big }}-{{ big | length }}', { big })).toHaveLength(4 * MiB + 8);
    expect(r.render('{% for i in range(1, 50000) %}{{ i }},{% endfor %}', {})).toHaveLength(288_894);
    const list = r.renderTyped('{{ range(1, 100000) | chunk(10) }}', {}) as unknown[];
    expect(list).toHaveLength(10_000);
  });
});

describe('limits are not swallowed', () => {
  const vars = { s: 'a'.repeat(6 * MiB) };
  it.each([
    ['`??`', "{{ (s ~ s) ?? 'fallback' }}"],
    ['`???`', "{{ (s ~ s) ??? 'fallback' }}"],
    ['`default`', "{{ (s ~ s) | default('fallback') }}"],
    ['`is defined`', '{{ (s ~ s) is defined }}'],
    ['`is null`', '{{ (s ~ s) is null }}'],
    ['render()', "{{ render('{{ s ~ s }}') }}"],
  ])('a limit reached on the left of %s propagates as a LimitError', (_name, template) => {
    expect(limitOf(template, vars).error.setting).toBe(SIZE);
  });

  it('a timeout inside `default` propagates too', () => {
    expect(limitOf("{{ ({} | jq('last(repeat(1))')) | default('x') }}").error.setting).toBe(TIME);
  });

  it('an ordinary error stays an ExpressionError', () => {
    expect(() => r.render('{{ nope.x }}', {})).toThrow(ExpressionError);
  });
});

describe('settings', () => {
  it('EXPRESSION_TIMEOUT_MS and EXPRESSION_MAX_BYTES overrides are honoured', () => {
    const limits = limitsFromEnv({ EXPRESSION_TIMEOUT_MS: '50', EXPRESSION_MAX_BYTES: '2048' });
    const small = createRenderer({}, { timeoutMs: limits.expressionTimeoutMs, maxBytes: limits.expressionMaxBytes });
    const size = limitOf('{{ s }}', { s: 'a'.repeat(3000) }, small).error;
    expect(size.setting).toBe(SIZE);
    expect(size.message).toContain('over the limit of 2048');
    expect(small.render('{{ s }}', { s: 'a'.repeat(2000) })).toHaveLength(2000);
    const { error, ms } = limitOf("{{ {} | jq('last(repeat(1))') }}", {}, small);
    expect(error.setting).toBe(TIME);
    expect(error.message).toContain('over the limit of 50');
    expect(ms).toBeLessThan(100 + 50);
  });

  it('defaults to DEFAULT_LIMITS (1000 ms, 10 MiB)', () => {
    const defaults = createRenderer();
    expect(limitOf('{{ s ~ s }}', { s: 'a'.repeat(6 * MiB) }, defaults).error.message).toContain(`over the limit of ${10 * MiB}`);
    const { error, ms } = limitOf("{{ {} | jq('last(repeat(1))') }}", {}, defaults);
    expect(error.message).toContain('over the limit of 1000');
    expect(ms).toBeLessThan(2000);
  });
});
