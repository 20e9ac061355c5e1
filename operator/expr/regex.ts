// Every regular expression that comes from a flow or an input runs here, on re2js (RE2: time linear in the text, no
// backtracking), never on the host's RegExp. Java-style replacements (`$1`, `${name}`, `\$`) as Kestra's Java does.
import { RE2JS, type Matcher } from 're2js';
import type { Budget } from './budget.js';
import { ExpressionError } from './errors.js';
import { withinBudget } from './watchdog.js';

export const RE2_SYNTAX = 'regular expressions use RE2 syntax (linear time): lookaround and backreferences are not supported';

/** Cost (text length x program size) above which a match runs under the render's watchdog (~10 ms of work). */
const DIRECT_COST = 1_000_000;
const CACHE_LIMIT = 500;
const cache = new Map<string, RE2JS | string>();

const LOOKAROUND_OR_BACKREFERENCE = /\(\?<?[=!]|\\[1-9]|\\k</;

function compileOrReason(pattern: string): RE2JS | string {
  const hit = cache.get(pattern);
  if (hit !== undefined) return hit;
  let out: RE2JS | string;
  try {
    out = RE2JS.compile(pattern);
  } catch (error) {
    const detail = ((error as Error)?.message ?? String(error)).replace(/^error parsing regexp: /, '');
    out = LOOKAROUND_OR_BACKREFERENCE.test(pattern) ? `${detail} (${RE2_SYNTAX})` : detail;
  }
  cache.set(pattern, out);
  if (cache.size > CACHE_LIMIT) cache.delete(cache.keys().next().value as string);
  return out;
}

/** Why `pattern` cannot be used (syntax error, or a feature RE2 does not have), or undefined when it can. */
export function regexIssue(pattern: string): string | undefined {
  const compiled = compileOrReason(pattern);
  return typeof compiled === 'string' ? compiled : undefined;
}

/** The compiled pattern; throws ExpressionError naming the pattern and the reason. */
export function compileRegex(pattern: string, what = 'regular expression'): RE2JS {
  const compiled = compileOrReason(pattern);
  if (typeof compiled === 'string') throw new ExpressionError(`${what}: invalid regular expression \`${pattern}\`: ${compiled}`);
  return compiled;
}

/** Java `String.matches`: the whole text matches. */
export function fullMatch(pattern: RE2JS, text: string): boolean {
  return pattern.matches(text);
}

/** A reusable test of a pattern from a flow: the whole text (`matches()`, default) or any part of it (`find()`). */
export function regexTest(pattern: string, mode: 'whole' | 'find' = 'whole', what?: string): { test(text: string): boolean } {
  const re = compileRegex(pattern, what);
  return { test: mode === 'whole' ? (text) => re.matches(text) : (text) => re.test(text) };
}

/** Runs a match over `text` directly when cheap, else under the render's watchdog. */
function guarded<T>(pattern: RE2JS, text: string, budget: Budget | undefined, run: () => T): T {
  if (!budget || text.length * Math.max(1, pattern.programSize()) <= DIRECT_COST) return run();
  return withinBudget(budget, run, `took too long matching the regular expression \`${pattern.pattern()}\``);
}

/** Every match of `pattern` replaced by `replacement` (Java syntax); the result is bounded by the budget's size. */
export function replaceAll(text: string, pattern: RE2JS, replacement: string, budget?: Budget): string {
  return guarded(pattern, text, budget, () => {
    const m = pattern.matcher(text);
    const parts: string[] = [];
    let size = 0;
    let last = 0;
    while (m.find()) {
      const piece = expandJava(replacement, m);
      size += m.start() - last + piece.length;
      if (budget && size > budget.maxBytes) throw budget.tooBig(`would build a text of more than ${budget.maxBytes} bytes`);
      parts.push(text.slice(last, m.start()), piece);
      last = m.end();
    }
    parts.push(text.slice(last));
    return parts.join('');
  });
}

function groupText(m: Matcher, group: number | string): string {
  try {
    return m.group(group) ?? '';
  } catch (error) {
    throw new ExpressionError(`replace: no group \`${String(group)}\` in \`${m.pattern().pattern()}\` (${(error as Error).message})`);
  }
}

/** java.util.regex replacement: `$n` takes as many digits as form a group number, `${name}`, and `\x` is x. */
function expandJava(replacement: string, m: Matcher): string {
  if (!replacement.includes('$') && !replacement.includes('\\')) return replacement;
  const groups = m.groupCount();
  let out = '';
  for (let i = 0; i < replacement.length;) {
    const c = replacement[i];
    if (c === '\\') {
      if (i + 1 >= replacement.length) throw new ExpressionError('replace: character to be escaped is missing');
      out += replacement[i + 1];
      i += 2;
    } else if (c === '$') {
      const next = replacement[i + 1];
      if (next === '{') {
        const close = replacement.indexOf('}', i + 2);
        if (close < 0) throw new ExpressionError("replace: named group is missing its closing '}'");
        out += groupText(m, replacement.slice(i + 2, close));
        i = close + 1;
      } else if (next !== undefined && next >= '0' && next <= '9') {
        let n = Number(next);
        let j = i + 2;
        while (j < replacement.length && /\d/.test(replacement[j]) && n * 10 + Number(replacement[j]) <= groups) n = n * 10 + Number(replacement[j++]);
        if (n > groups) throw new ExpressionError(`replace: no group ${n} in \`${m.pattern().pattern()}\``);
        out += groupText(m, n);
        i = j;
      } else {
        throw new ExpressionError('replace: illegal group reference (a `$` must be followed by a group number or {name})');
      }
    } else {
      out += c;
      i++;
    }
  }
  return out;
}
