// Table tests of the log search syntax: parsing into OR-ed groups of AND-ed terms, and SQL made only of placeholders.
import { describe, expect, it } from 'vitest';
import { compileLogQuery, parseLogQuery, prefixQuery } from './log-query.js';

const w = (text: string, negated = false) => ({ kind: 'word', text, negated });
const p = (text: string, negated = false) => ({ kind: 'phrase', text, negated });
const x = (text: string, negated = false) => ({ kind: 'prefix', text, negated });

describe('parseLogQuery', () => {
  it.each([
    ['orders', [[w('orders')]]],
    ['database AND refused', [[w('database'), w('refused')]]],
    ['a b OR c', [[w('a'), w('b')], [w('c')]]],
    ['"connection refused" host', [[p('connection refused'), w('host')]]],
    ['"unterminated phrase', [[p('unterminated phrase')]]],
    ['conn* -debug NOT trace', [[x('conn'), w('debug', true), w('trace', true)]]],
    ['AND OR NOT', [[w('AND'), w('OR'), w('NOT')]]],
    ['a OR', [[w('a'), w('OR')]]],
    ['and or', [[w('and'), w('or')]]],
    ['*** - "" "!!"', []],
    ['(AND', [[w('(AND')]]],
  ])('%j', (q, groups) => {
    expect(parseLogQuery(q)).toEqual(groups);
  });
});

describe('compileLogQuery', () => {
  it('puts user text only in parameters', () => {
    const params: string[] = [];
    const sql = compileLogQuery(`it's "a ' b" c* OR -d`, (v) => { params.push(v); return `$${params.length}`; });
    expect(sql).toBe(`(plainto_tsquery('simple', $1) && phraseto_tsquery('simple', $2) && to_tsquery('simple', $3)) || ((!! plainto_tsquery('simple', $4)))`);
    expect(params).toEqual([`it's`, `a ' b`, `'c':*`, 'd']);
  });

  it('has nothing to match when no term holds a word', () => {
    expect(compileLogQuery('*** ""', () => '$1')).toBeUndefined();
  });

  it.each([
    ['conn', `'conn':*`],
    ["it's", `'it' <-> 's':*`],
    ['a|b&c', `'a' <-> 'b' <-> 'c':*`],
    ['日本', `'日本':*`],
    ["'':\\", undefined],
  ])('prefix %j', (text, query) => {
    expect(prefixQuery(text)).toBe(query);
  });
});
