// Pure helpers of the orchestration bench: percentiles of samples, the growth ratio of a cost per item across sizes,
// the summary table (figure, result, target, met) printed at the end of the group, and the totals of a V8 GC trace.
// No I/O; tested in stats.test.ts.

/** The p-th percentile (0 < p <= 1) of `xs` by nearest rank (the smallest sample with at least p of them at or below it); NaN when empty. */
export function percentile(xs: readonly number[], p: number): number {
  if (!(p > 0 && p <= 1)) throw new RangeError(`percentile: p must be in (0, 1], got ${p}`);
  if (!xs.length) return NaN;
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.ceil(p * sorted.length) - 1]!;
}

/** The median by nearest rank (the lower middle sample of an even count); NaN when empty. */
export const median = (xs: readonly number[]): number => percentile(xs, 0.5);

/**
 * How a cost per item grows across sizes: the cost at the largest size over the cost at the smallest (1 = flat,
 * 10 over a 10x size range = linear growth of the cost per item, i.e. quadratic in total). NaN with fewer than two sizes.
 */
export function growth(points: readonly { items: number; msPerItem: number }[]): number {
  if (points.length < 2) return NaN;
  const bySize = [...points].sort((a, b) => a.items - b.items);
  return bySize[bySize.length - 1]!.msPerItem / bySize[0]!.msPerItem;
}

/** One line of the summary: `met` is undefined when the figure has no target or could not be measured. */
export interface SummaryRow { figure: string; result: string; target: string; met?: boolean }

/** A row comparing `value` with a bound: `<=`/`<` for costs, `>=` for rates; NaN (not measured) is neither met nor missed. */
export function check(figure: string, value: number, op: '<' | '<=' | '>=', bound: number, unit: string, digits = 2): SummaryRow {
  const result = Number.isNaN(value) ? 'not measured' : `${value.toFixed(digits)}${unit}`;
  const row: SummaryRow = { figure, result, target: `${op} ${bound}${unit}` };
  if (!Number.isNaN(value)) row.met = op === '<' ? value < bound : op === '<=' ? value <= bound : value >= bound;
  return row;
}

/** The summary as a plain-text table with a header, aligned columns and `yes` / `NO` / `-` in the last one. */
export function formatSummary(rows: readonly SummaryRow[]): string {
  const cells = [['figure', 'result', 'target', 'met'],
    ...rows.map((r) => [r.figure, r.result, r.target, r.met === undefined ? '-' : r.met ? 'yes' : 'NO'])];
  const widths = cells[0]!.map((_, i) => Math.max(...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) => c.map((v, i) => (i === c.length - 1 ? v : v.padEnd(widths[i]!))).join('  ').trimEnd();
  return [line(cells[0]!), widths.map((w) => '-'.repeat(w)).join('  '), ...cells.slice(1).map(line)].join('\n');
}

/** What the collections of a `node --trace-gc-nvp` trace add up to: bytes allocated between them, pauses, their count. */
export interface GcTotals { allocatedBytes: number; pauseMs: number; collections: number }

/**
 * Sums the lines of `--trace-gc-nvp` output in `text` (one line per collection, `pause=<ms>` and `allocated=<bytes>`:
 * the bytes allocated since the previous collection); other lines are ignored.
 */
export function gcTotals(text: string): GcTotals {
  const totals: GcTotals = { allocatedBytes: 0, pauseMs: 0, collections: 0 };
  for (const line of text.split('\n')) {
    const allocated = / allocated=(\d+)/.exec(line);
    const pause = / pause=([\d.]+)/.exec(line);
    if (!allocated || !pause) continue;
    totals.allocatedBytes += Number(allocated[1]);
    totals.pauseMs += Number(pause[1]);
    totals.collections++;
  }
  return totals;
}
