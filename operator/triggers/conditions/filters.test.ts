// Table of the `preconditions.where` execution filters (Kestra's ExecutionFilters semantics).
import { describe, expect, it } from 'vitest';
import { filterMatches, whereMatches, type ExecutionFilter } from './filters.js';

const exec = {
  namespace: 'company.team', flowId: 'etl_daily', state: { current: 'WARNING' },
  labels: [{ key: 'env', value: 'prod' }], outputs: {},
};
const render = (t: string) => (t === '{{ ok }}' ? 'true' : t === '{{ no }}' ? 'false' : t);

describe('filterMatches', () => {
  it.each<[ExecutionFilter, boolean]>([
    [{ field: 'FLOW_ID', type: 'EQUAL_TO', value: 'etl_daily' }, true],
    [{ field: 'FLOW_ID', type: 'NOT_EQUAL_TO', value: 'etl_daily' }, false],
    [{ field: 'NAMESPACE', type: 'STARTS_WITH', value: 'company' }, true],
    [{ field: 'NAMESPACE', type: 'ENDS_WITH', value: '.ops' }, false],
    [{ field: 'STATE', type: 'IN', values: ['SUCCESS', 'WARNING'] }, true],
    [{ field: 'STATE', type: 'NOT_IN', values: ['SUCCESS', 'WARNING'] }, false],
    [{ field: 'FLOW_ID', type: 'REGEX', value: 'etl_.*' }, true],
    [{ field: 'FLOW_ID', type: 'REGEX', value: 'etl' }, false], // whole value, as Java's matches()
    [{ field: 'FLOW_ID', type: 'CONTAINS', value: 'daily' }, true],
    [{ field: 'EXPRESSION', type: 'IS_TRUE', value: '{{ ok }}' }, true],
    [{ field: 'EXPRESSION', type: 'IS_FALSE', value: '{{ no }}' }, true],
    [{ field: 'LABEL', type: 'EQUAL_TO', value: 'env:prod' }, true],
    [{ field: 'LABEL', type: 'IS_NOT_NULL', value: 'env' }, true],
    [{ field: 'LABEL', type: 'IS_NULL', value: 'team' }, true],
  ])('%j → %s', (f, expected) => { expect(filterMatches(exec, f, render)).toBe(expected); });

  it('REGEX runs on RE2: a catastrophic pattern over a long value answers at once; lookaround is refused', () => {
    const long = { ...exec, flowId: `${'a'.repeat(50_000)}!` };
    const start = performance.now();
    expect(filterMatches(long, { field: 'FLOW_ID', type: 'REGEX', value: '(a+)+$' }, render)).toBe(false);
    expect(performance.now() - start).toBeLessThan(1_000);
    expect(() => filterMatches(exec, { field: 'FLOW_ID', type: 'REGEX', value: 'etl(?=_)' }, render)).toThrow(/RE2 syntax/);
  });

  it('rejects unknown fields and types', () => {
    expect(() => filterMatches(exec, { field: 'COLOR', type: 'EQUAL_TO', value: 'x' }, render)).toThrow(/not one of/);
    expect(() => filterMatches(exec, { field: 'STATE', type: 'LIKE', value: 'x' }, render)).toThrow(/not one of/);
  });
});

describe('whereMatches', () => {
  const yes = { field: 'FLOW_ID', type: 'EQUAL_TO', value: 'etl_daily' };
  const no = { field: 'STATE', type: 'EQUAL_TO', value: 'FAILED' };
  it.each([
    [[yes, no], undefined, false], [[yes, no], 'AND', false], [[yes, no], 'OR', true], [[yes], 'and', true], [[no], 'OR', false],
  ])('%j %s → %s', (filters, operand, expected) => { expect(whereMatches(exec, filters, operand, render)).toBe(expected); });
});
