// Tests of the script file helpers: glob matching, safe input paths, output collection.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { makeTestContext, type TestContext } from '../testing.js';
import { collectOutputFiles, globToRegExp, safeJoin } from './files.js';
import { parseProtocolLine } from './protocol.js';

describe('globToRegExp', () => {
  it.each([
    ['*.csv', 'a.csv', true],
    ['*.csv', 'dir/a.csv', false],
    ['**/*.csv', 'a.csv', true],
    ['**/*.csv', 'x/y/a.csv', true],
    ['out/**', 'out/a/b.txt', true],
    ['file?.txt', 'file1.txt', true],
    ['*.{json,csv}', 'a.json', true],
    ['*.{json,csv}', 'a.txt', false],
    ['[ab].txt', 'b.txt', true],
    ['a.b', 'axb', false],
  ])('%s matches %s: %s', (glob, path, expected) => {
    expect(globToRegExp(glob).test(path)).toBe(expected);
  });

  // Nested ** backtracked exponentially on RegExp (10 levels against a 30-deep path: 13 s; 12 against 40: hours);
  // on RE2 this answers at once, so the test's own time limit is the proof.
  it('matches in linear time: nested ** cannot stall the server', { timeout: 10_000 }, () => {
    const glob = `${'**/'.repeat(12)}x`;
    expect(globToRegExp(glob).test(`${Array(40).fill('a').join('/')}/y`)).toBe(false);
    expect(globToRegExp(glob).test(`${Array(40).fill('a').join('/')}/x`)).toBe(true);
  });
});

describe('safeJoin', () => {
  it('keeps names inside the root', () => {
    expect(safeJoin('/w', 'a/b.txt')).toBe('/w/a/b.txt');
    expect(() => safeJoin('/w', '../x')).toThrow('Invalid input file name');
    expect(() => safeJoin('/w', '/etc/passwd')).toThrow('Invalid input file name');
    expect(() => safeJoin('/w', '.')).toThrow('Invalid input file name');
  });
});

describe('collectOutputFiles', () => {
  let t: TestContext | undefined;
  afterEach(async () => { await t?.cleanup(); t = undefined; });

  it('uploads matching files only, outputDir files under their own names', async () => {
    t = makeTestContext({ task: { id: 'x', type: 't' } });
    const wd = t.ctx.workingDir;
    const out = join(wd, 'output-tr1');
    mkdirSync(out);
    writeFileSync(join(wd, 'a.csv'), '1');
    writeFileSync(join(wd, 'b.txt'), '2');
    writeFileSync(join(out, 'c.csv'), '3');
    const files = await collectOutputFiles(t.ctx, wd, ['*.csv'], out);
    expect(Object.keys(files).sort()).toEqual(['a.csv', 'c.csv']);
    expect((await t.stores.storage.get(files['c.csv']!)).toString()).toBe('3');
  });
});

describe('parseProtocolLine', () => {
  it('parses outputs, metrics and logs, and ignores ordinary lines', () => {
    expect(parseProtocolLine('::{"outputs":{"a":1}}::')).toEqual({ outputs: { a: 1 } });
    expect(parseProtocolLine('  ::{"metrics":[{"name":"m","type":"counter","value":"2"}]}::  ')).toEqual({
      metrics: [{ name: 'm', type: 'counter', value: 2 }],
    });
    expect(parseProtocolLine('::{"logs":[{"level":"warning","message":"w"}]}::')).toEqual({ logs: [{ level: 'WARN', message: 'w' }] });
    expect(parseProtocolLine('hello')).toBeUndefined();
    expect(parseProtocolLine('::{not json}::')).toBeUndefined();
    expect(parseProtocolLine('::{"other":1}::')).toBeUndefined();
  });

  it('parses outputs and metric tags into prototype-free maps: `__proto__` is an ordinary key', () => {
    const msg = parseProtocolLine('::{"outputs":{"__proto__":{"polluted":true},"a":{"constructor":1}},"metrics":[{"name":"m","value":1,"tags":{"__proto__":"t"}}]}::')!;
    expect(Object.getPrototypeOf(msg.outputs)).toBeNull();
    expect(Object.keys(msg.outputs!)).toEqual(['__proto__', 'a']);
    expect(Object.getPrototypeOf(msg.outputs!.__proto__)).toBeNull();
    expect(Object.getPrototypeOf(msg.outputs!.a)).toBeNull();
    expect(Object.entries(msg.metrics![0]!.tags!)).toEqual([['__proto__', 't']]);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
