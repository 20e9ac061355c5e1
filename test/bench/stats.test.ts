// Table tests of the bench's pure helpers (test/bench/stats.ts): percentiles, growth ratio, summary rows and table, GC trace totals.
import { describe, expect, it } from 'vitest';
import { check, formatSummary, gcTotals, growth, median, percentile } from './stats.js';

describe('percentile (nearest rank)', () => {
  const hundred = Array.from({ length: 100 }, (_, i) => 100 - i); // 100..1, unsorted on purpose
  it.each([
    [[5], 0.5, 5],
    [[5], 0.99, 5],
    [[3, 1, 2], 0.5, 2],
    [[4, 1, 3, 2], 0.5, 2],
    [hundred, 0.5, 50],
    [hundred, 0.99, 99],
    [hundred, 1, 100],
    [hundred, 0.001, 1],
    [[10, 10, 10, 1000], 0.99, 1000],
    [[10, 10, 10, 1000], 0.75, 10],
  ])('%j p%s = %s', (xs, p, want) => {
    expect(percentile(xs, p)).toBe(want);
  });

  it('is NaN without samples and rejects a p outside (0, 1]', () => {
    expect(percentile([], 0.5)).toBeNaN();
    expect(() => percentile([1], 0)).toThrow(RangeError);
    expect(() => percentile([1], 1.5)).toThrow(RangeError);
  });

  it('does not reorder its input', () => {
    const xs = [3, 1, 2];
    median(xs);
    expect(xs).toEqual([3, 1, 2]);
  });
});

describe('growth of the cost per item', () => {
  it.each([
    [[{ items: 1000, msPerItem: 0.05 }, { items: 100000, msPerItem: 0.05 }], 1],
    [[{ items: 4000, msPerItem: 8 }, { items: 1000, msPerItem: 2 }], 4],
    [[{ items: 1000, msPerItem: 0.1 }, { items: 10000, msPerItem: 0.3 }, { items: 100000, msPerItem: 0.2 }], 2],
  ])('%j -> %s', (points, want) => {
    expect(growth(points)).toBeCloseTo(want, 10);
  });

  it('is NaN with fewer than two sizes', () => {
    expect(growth([{ items: 10, msPerItem: 1 }])).toBeNaN();
  });
});

describe('summary rows', () => {
  it.each([
    [0.2, '>=', 0.15, true],
    [0.1, '>=', 0.15, false],
    [0.3, '<=', 0.3, true],
    [0.31, '<=', 0.3, false],
    [100, '<', 100, false],
    [99.9, '<', 100, true],
  ] as const)('%s %s %s -> met %s', (value, op, bound, met) => {
    expect(check('x', value, op, bound, '').met).toBe(met);
  });

  it('leaves a figure that was not measured neither met nor missed', () => {
    expect(check('x', NaN, '<', 1, ' ms')).toEqual({ figure: 'x', result: 'not measured', target: '< 1 ms' });
  });

  it('formats the table with aligned columns', () => {
    const table = formatSummary([
      check('3-task executions / floor', 0.2, '>=', 0.15, 'x'),
      check('100-task sequential', 0.55, '<=', 0.3, ' ms/task'),
      { figure: 'floor', result: '9000 req/s', target: '' },
    ]);
    expect(table.split('\n')).toEqual([
      'figure                     result        target          met',
      '-------------------------  ------------  --------------  ---',
      '3-task executions / floor  0.20x         >= 0.15x        yes',
      '100-task sequential        0.55 ms/task  <= 0.3 ms/task  NO',
      'floor                      9000 req/s                    -',
    ]);
  });
});

describe('gcTotals (node --trace-gc-nvp lines)', () => {
  it('adds up the allocated bytes and pauses of the collection lines, ignoring other output', () => {
    const text = [
      'listening on http://127.0.0.1:1234',
      '[1:0x1]       42 ms: pause=4.1 mutator=35.9 gc=s reduce_memory=0 total_size_before=3960536 allocated=3960536 promoted=0',
      'inference: a line of the server',
      '[1:0x1]       47 ms: pause=0.9 mutator=0.4 gc=s allocated=691240 promoted=591120 new_space_survived=260128',
      '[1:0x1]      900 ms: pause=12.5 mutator=800.0 gc=mc allocated=1000 promoted=0',
    ].join('\n');
    expect(gcTotals(text)).toEqual({ allocatedBytes: 3960536 + 691240 + 1000, pauseMs: 4.1 + 0.9 + 12.5, collections: 3 });
    expect(gcTotals('')).toEqual({ allocatedBytes: 0, pauseMs: 0, collections: 0 });
  });
});
