// Regular expressions from flows run on RE2 (linear time): Java replacement syntax, whole-string matching, and a
// clear refusal, naming the pattern, of what RE2 cannot run (lookaround, backreferences).
import { describe, expect, it } from 'vitest';
import { createRenderer, ExpressionError } from './index.js';
import { compileRegex, fullMatch, RE2_SYNTAX, regexIssue, replaceAll } from './regex.js';

const r = createRenderer();

describe('replace(..., regexp=true)', () => {
  it.each([
    ["{{ 'joe@x and bo@y' | replace('(\\\\w+)@(\\\\w+)', '$2:$1', true) }}", 'x:joe and y:bo'],
    ["{{ 'joe@x' | replace({'(?P<user>\\\\w+)@(\\\\w+)': '${user} at $2'}, regexp=true) }}", 'joe at x'],
    ["{{ 'a.b.c' | replace('\\\\.', '\\\\$', true) }}", 'a$b$c'],
    ["{{ 'abc' | replace('', '-', true) }}", '-a-b-c-'],
    ["{{ 'a1b22c333' | replace('[0-9]+', '#', regexp=true) }}", 'a#b#c#'],
    ["{{ 'a1b22' | replace({'[a-z]': 'L', '[0-9]': 'D'}, regexp=true) }}", 'LDLDD'],
    ["{{ 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!' | replace({'(a+)+$':'x'}, regexp=true) }}", 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!'],
    ["{{ 'a.b' | replace('.', '-') }}", 'a-b'],
    ["{{ 'héllo wörld' | replace('\\\\p{L}+', 'w', true) }}", 'w w'],
  ])('%s → %s', (template, expected) => {
    expect(r.render(template, {})).toBe(expected);
  });

  it.each([
    ["{{ 'ab' | replace('a(?=b)', 'x', true) }}", 'a(?=b)'],
    ["{{ 'ab' | replace('(?<!a)b', 'x', true) }}", '(?<!a)b'],
    ["{{ 'aa' | replace('(a)\\\\1', 'x', true) }}", '(a)\\1'],
  ])('%s is refused: RE2 syntax, naming the pattern', (template, pattern) => {
    expect(() => r.render(template, {})).toThrow(ExpressionError);
    expect(() => r.render(template, {})).toThrow(`invalid regular expression \`${pattern}\``);
    expect(() => r.render(template, {})).toThrow(RE2_SYNTAX);
  });

  it.each([
    ["{{ 'ab' | replace('(a)', '$2', true) }}", 'no group 2'],
    ["{{ 'ab' | replace('(a)', 'x$', true) }}", 'illegal group reference'],
    ["{{ 'ab' | replace('[a-', 'x', true) }}", 'missing closing ]'],
  ])('%s fails with %s', (template, message) => {
    expect(() => r.render(template, {})).toThrow(message);
  });
});

describe('regex module', () => {
  it('matches the whole text for validators (Java matches())', () => {
    const re = compileRegex('[a-z]+');
    expect(fullMatch(re, 'abc')).toBe(true);
    expect(fullMatch(re, 'abc1')).toBe(false);
    expect(fullMatch(compileRegex('a|ab'), 'ab')).toBe(true);
  });

  it('explains what cannot run, and accepts what RE2 can', () => {
    expect(regexIssue('(?=x)')).toContain(RE2_SYNTAX);
    expect(regexIssue('\\k<n>')).toContain(RE2_SYNTAX);
    expect(regexIssue('[0-9]{2,3}-\\w+')).toBeUndefined();
  });

  it('is linear: a pattern that backtracks for hours elsewhere takes milliseconds on 100k characters', () => {
    const start = performance.now();
    expect(replaceAll(`${'a'.repeat(100_000)}!`, compileRegex('(a+)+$'), 'x')).toHaveLength(100_001);
    expect(performance.now() - start).toBeLessThan(500);
  });
});
