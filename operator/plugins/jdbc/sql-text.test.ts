// Tables for the jdbc tasks' pure parts: statement splitting and named-parameter binding (sql-text.ts), JDBC URL
// parsing (url.ts) and Kestra's value conversions (cells.ts).
import { describe, expect, it } from 'vitest';
import { exactNumber, kestraInterval, localDateTime, zonedDateTime, zonedTime } from './cells.js';
import { bindNamed, splitStatements } from './sql-text.js';
import { parseJdbcUrl } from './url.js';

describe('splitStatements', () => {
  it.each([
    ['SELECT 1; SELECT 2;', 'postgresql', ['SELECT 1', 'SELECT 2']],
    ["SELECT 'a;b'; SELECT \"x;y\" FROM t", 'postgresql', ["SELECT 'a;b'", 'SELECT "x;y" FROM t']],
    ['SELECT $$a;b$$; SELECT $f$c;d$f$', 'postgresql', ['SELECT $$a;b$$', 'SELECT $f$c;d$f$']],
    ['SELECT 1 -- c;omment\n; /* x;y */ ; SELECT 2', 'postgresql', ['SELECT 1 -- c;omment', 'SELECT 2']],
    ["SELECT 'it\\'s;' ; SELECT `a;b`", 'mysql', ["SELECT 'it\\'s;'", 'SELECT `a;b`']],
    ['  ;  ; ', 'postgresql', []],
  ] as const)('%s (%s)', (sql, dialect, expected) => {
    expect(splitStatements(sql, dialect)).toEqual(expected);
  });
});

describe('bindNamed', () => {
  it('one placeholder per occurrence, values in order; casts, quotes and comments untouched', () => {
    expect(bindNamed("SELECT :a::int, ':b', :b -- :c\n FROM t WHERE x = :a", { a: 1, b: 'x', c: 0 }, 'postgresql'))
      .toEqual({ text: "SELECT $1::int, ':b', $2 -- :c\n FROM t WHERE x = $3", values: [1, 'x', 1], used: ['a', 'b'] });
    expect(bindNamed('SELECT * FROM t WHERE a = :a AND b = :b', { a: "'; DROP TABLE t; --", b: null }, 'mysql'))
      .toEqual({ text: 'SELECT * FROM t WHERE a = ? AND b = ?', values: ["'; DROP TABLE t; --", null], used: ['a', 'b'] });
  });
  it('refuses a name the parameters lack', () => {
    expect(() => bindNamed('SELECT :x', {}, 'mysql')).toThrow("SQL uses the parameter ':x' but 'parameters' does not set it");
  });
});

describe('parseJdbcUrl', () => {
  it.each([
    ['jdbc:postgresql://db.example:6543/shop?sslmode=require&currentSchema=s1', 'postgresql', { host: 'db.example', port: 6543, database: 'shop', params: { sslmode: 'require', currentSchema: 's1' } }],
    ['jdbc:postgresql://localhost/', 'postgresql', { host: 'localhost', port: 5432, database: undefined, params: {} }],
    ['jdbc:mariadb://u:p%40ss@[::1]:3307/db', 'mysql', { host: '::1', port: 3307, database: 'db', params: { user: 'u', password: 'p@ss' } }],
    ['jdbc:mysql://127.0.0.1:3306/', 'mysql', { host: '127.0.0.1', port: 3306, database: undefined, params: {} }],
  ] as const)('%s', (url, kind, expected) => {
    expect({ ...parseJdbcUrl(url, kind) }).toEqual({ kind, ...expected, params: expect.objectContaining(expected.params) });
  });
  it.each([
    ['postgres://h/db', /must be a JDBC URL/],
    ['jdbc:mysql://h/db', /jdbc:mysql URL; this task connects to PostgreSQL/],
    ['jdbc:postgresql://a:1,b:2/db', /several hosts/],
    ['jdbc:postgresql://h:99999/db', /invalid port/],
  ])('refuses %s', (url, message) => {
    expect(() => parseJdbcUrl(url, 'postgresql')).toThrow(message);
  });
});

describe('cells', () => {
  it.each([
    ['2147483645.1234', 2147483645.1234], ['1.10', 1.1], ['-0007', -7], ['9223372036854775807', '9223372036854775807'],
    ['12345678901234567890.123456789', '12345678901234567890.123456789'], ['NaN', 'NaN'],
  ])('exactNumber(%s)', (text, expected) => expect(exactNumber(text)).toEqual(expected));

  it('converts date-times, zones and intervals as Kestra prints them', () => {
    expect(localDateTime('2004-10-19 10:23:54.999999')).toBe('2004-10-19T10:23:54.999999');
    expect(localDateTime('infinity')).toBe('infinity');
    expect(zonedDateTime('2004-10-19 06:23:54.25+00', 'Europe/Paris')).toBe('2004-10-19T08:23:54.25+02:00');
    expect(zonedDateTime('2004-01-19 06:23:54+00', 'Europe/Paris')).toBe('2004-01-19T07:23:54+01:00');
    expect(zonedDateTime('2004-10-19 06:23:54.000+05:30', 'UTC')).toBe('2004-10-19T00:53:54Z');
    expect(zonedTime('13:05:06+02', 'UTC')).toBe('11:05:06');
    expect(kestraInterval('P10Y4M5DT10S')).toBe('P10Y4M5DT0H0M10S');
    expect(kestraInterval('P1W')).toBe('P0Y0M7DT0H0M0S');
  });
});
