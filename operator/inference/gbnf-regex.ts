// A JSON-schema `pattern` (ECMAScript regex subset) parsed into a small tree, and the GBNF text helpers the grammar
// converter shares: literals and character classes escaped for llama.cpp's GBNF parser, inside a JSON string.
//
// Subset: literals, escapes (\n \t \r \f \v \0 \xHH \uHHHH and escaped syntax characters), classes `[...]` / `[^...]`
// with ranges, `\d \w \s \D \W \S`, `.`, groups `( )` and `(?: )`, alternation, quantifiers `? * + {n} {n,} {n,m}`
// (lazy forms too: same language), and `^` / `$` at the start / end of a top-level alternative. Anything else
// (lookarounds, backreferences, word boundaries, named groups, \p classes, code points beyond U+FFFF) is Unsupported.

export class UnsupportedPattern extends Error {}

export type RNode =
  | { k: 'set'; neg: boolean; ranges: [number, number][] } // one character (a literal is a one-range set)
  | { k: 'any' }
  | { k: 'seq'; items: RNode[] }
  | { k: 'alt'; items: RNode[] }
  | { k: 'rep'; node: RNode; min: number; max?: number };

/** One top-level alternative of a pattern and whether it is anchored at each end. */
export interface PatternBranch { node: RNode; start: boolean; end: boolean }

const DIGIT: [number, number][] = [[0x30, 0x39]];
const WORD: [number, number][] = [[0x30, 0x39], [0x41, 0x5a], [0x5f, 0x5f], [0x61, 0x7a]];
const SPACE: [number, number][] = [[0x09, 0x0d], [0x20, 0x20], [0xa0, 0xa0], [0x1680, 0x1680], [0x2000, 0x200a],
  [0x2028, 0x2029], [0x202f, 0x202f], [0x205f, 0x205f], [0x3000, 0x3000], [0xfeff, 0xfeff]];
const SYNTAX = '^$\\.*+?()[]{}|/-';

/** Complement of sorted, merged ranges within the BMP. */
function complement(ranges: [number, number][]): [number, number][] {
  const out: [number, number][] = [];
  let next = 0;
  for (const [lo, hi] of normalize(ranges)) {
    if (lo > next) out.push([next, lo - 1]);
    next = hi + 1;
  }
  if (next <= 0xffff) out.push([next, 0xffff]);
  return out;
}

/** Sorted, merged, non-overlapping ranges. */
export function normalize(ranges: [number, number][]): [number, number][] {
  const sorted = [...ranges].sort((a, b) => a[0] - b[0]);
  const out: [number, number][] = [];
  for (const [lo, hi] of sorted) {
    const last = out[out.length - 1];
    if (last && lo <= last[1] + 1) last[1] = Math.max(last[1], hi);
    else out.push([lo, hi]);
  }
  return out;
}

/** Deepest group nesting parsed (the parser recurses per group). */
const MAX_GROUP_DEPTH = 64;

class Parser {
  i = 0;
  depth = 0;
  constructor(private s: string) {}

  peek(): string | undefined { return this.s[this.i]; }
  eat(c: string): boolean { if (this.s[this.i] === c) { this.i++; return true; } return false; }

  branches(): PatternBranch[] {
    const out: PatternBranch[] = [];
    do {
      const start = this.eat('^');
      const node = this.seq(true);
      const end = this.eat('$');
      if (this.peek() !== undefined && this.peek() !== '|') throw new UnsupportedPattern(`'${this.peek()}' at ${this.i}`);
      out.push({ node, start, end });
    } while (this.eat('|'));
    return out;
  }

  alternation(): RNode {
    const items = [this.seq(false)];
    while (this.eat('|')) items.push(this.seq(false));
    return items.length === 1 ? items[0] : { k: 'alt', items };
  }

  /** Atoms with quantifiers up to `|`, `)` or the end (a top-level one also stops before a final `$`). */
  seq(top: boolean): RNode {
    const items: RNode[] = [];
    for (;;) {
      const c = this.peek();
      if (c === undefined || c === '|' || c === ')') break;
      if (c === '$' && top && (this.i + 1 === this.s.length || this.s[this.i + 1] === '|')) break;
      items.push(this.quantified(this.atom()));
    }
    return items.length === 1 ? items[0] : { k: 'seq', items };
  }

  quantified(node: RNode): RNode {
    let min: number, max: number | undefined;
    const c = this.peek();
    if (c === '?') { this.i++; min = 0; max = 1; }
    else if (c === '*') { this.i++; min = 0; }
    else if (c === '+') { this.i++; min = 1; }
    else if (c === '{') {
      const m = /^\{(\d{1,9})(,(\d{0,9}))?\}/.exec(this.s.slice(this.i));
      if (!m) throw new UnsupportedPattern('a lone {');
      this.i += m[0].length;
      min = Number(m[1]);
      max = m[2] === undefined ? min : m[3] === '' ? undefined : Number(m[3]);
      if (max !== undefined && max < min) throw new UnsupportedPattern('a {n,m} with m < n');
    } else return node;
    this.eat('?'); // lazy: same language
    const next = this.peek();
    if (next !== undefined && '?*+{'.includes(next)) throw new UnsupportedPattern('a quantifier on a quantifier');
    return { k: 'rep', node, min, max };
  }

  atom(): RNode {
    const c = this.s[this.i++];
    if (c === '(') {
      if (this.eat('?')) { if (!this.eat(':')) throw new UnsupportedPattern('lookarounds and named groups'); }
      if (++this.depth > MAX_GROUP_DEPTH) throw new UnsupportedPattern(`groups nested deeper than ${MAX_GROUP_DEPTH}`);
      const inner = this.alternation();
      this.depth--;
      if (!this.eat(')')) throw new UnsupportedPattern('an unclosed group');
      return inner;
    }
    if (c === '[') return this.cls();
    if (c === '.') return { k: 'any' };
    if (c === '\\') return this.escape(false);
    if (c === '^' || c === '$') throw new UnsupportedPattern('an anchor inside the pattern');
    if ('*+?{}]'.includes(c)) throw new UnsupportedPattern(`a bare '${c}'`);
    return single(this.codePoint(c));
  }

  codePoint(c: string): number {
    const cp = c.charCodeAt(0);
    if (cp >= 0xd800 && cp <= 0xdfff) throw new UnsupportedPattern('characters beyond U+FFFF');
    return cp;
  }

  /** After a backslash; in a class `\b` is a backspace, outside a word boundary (unsupported). */
  escape(inClass: boolean): RNode {
    const c = this.s[this.i++];
    if (c === undefined) throw new UnsupportedPattern('a trailing backslash');
    const sets: Record<string, [number, number][]> = { d: DIGIT, w: WORD, s: SPACE };
    if (sets[c]) return { k: 'set', neg: false, ranges: sets[c] };
    if (sets[c.toLowerCase()]) return { k: 'set', neg: false, ranges: complement(sets[c.toLowerCase()]) };
    const simple: Record<string, number> = { n: 10, t: 9, r: 13, f: 12, v: 11, 0: 0 };
    if (c in simple && !(c === '0' && /\d/.test(this.peek() ?? ''))) return single(simple[c]);
    if (c === 'b' && inClass) return single(8);
    if (c === 'x' || c === 'u') {
      const n = c === 'x' ? 2 : 4;
      const hex = this.s.slice(this.i, this.i + n);
      if (!new RegExp(`^[0-9a-fA-F]{${n}}$`).test(hex)) throw new UnsupportedPattern(`\\${c} without ${n} hex digits`);
      this.i += n;
      return single(this.codePoint(String.fromCharCode(parseInt(hex, 16))));
    }
    if (SYNTAX.includes(c)) return single(c.charCodeAt(0));
    throw new UnsupportedPattern(`the escape \\${c}`);
  }

  cls(): RNode {
    const neg = this.eat('^');
    const ranges: [number, number][] = [];
    let first = true;
    for (;;) {
      const c = this.s[this.i];
      if (c === undefined) throw new UnsupportedPattern('an unclosed class');
      if (c === ']' && !first) { this.i++; break; }
      first = false;
      const lo = this.classAtom();
      if (this.peek() === '-' && this.s[this.i + 1] !== ']' && this.s[this.i + 1] !== undefined) {
        this.i++;
        const hi = this.classAtom();
        if (lo.k !== 'set' || hi.k !== 'set' || lo.ranges.length !== 1 || hi.ranges.length !== 1
          || lo.ranges[0][0] !== lo.ranges[0][1] || hi.ranges[0][0] !== hi.ranges[0][1]) throw new UnsupportedPattern('a class range between sets');
        if (hi.ranges[0][0] < lo.ranges[0][0]) throw new UnsupportedPattern('a class range out of order');
        ranges.push([lo.ranges[0][0], hi.ranges[0][0]]);
      } else if (lo.k === 'set') ranges.push(...lo.ranges);
    }
    return { k: 'set', neg, ranges: normalize(ranges) };
  }

  classAtom(): RNode {
    const c = this.s[this.i++];
    if (c === '\\') return this.escape(true);
    if (c === '[') throw new UnsupportedPattern('nested classes');
    return single(this.codePoint(c));
  }
}

const single = (cp: number): RNode => ({ k: 'set', neg: false, ranges: [[cp, cp]] });

/** The pattern's top-level alternatives, or UnsupportedPattern naming what is outside the subset. */
export function parsePattern(pattern: string): PatternBranch[] {
  return new Parser(pattern).branches();
}

/** Shortest and longest match in characters (Infinity when unbounded). */
export function lengthRange(n: RNode): [number, number] {
  switch (n.k) {
    case 'set': case 'any': return [1, 1];
    case 'seq': return n.items.map(lengthRange).reduce(([a, b], [c, d]) => [a + c, b + d], [0, 0]);
    case 'alt': {
      const r = n.items.map(lengthRange);
      return [Math.min(...r.map((x) => x[0])), Math.max(...r.map((x) => x[1]))];
    }
    case 'rep': {
      const [lo, hi] = lengthRange(n.node);
      return [lo * n.min, n.max === undefined ? (hi === 0 ? 0 : Infinity) : hi * n.max];
    }
  }
}

// ---- GBNF text ----

/** A GBNF string literal for the exact text `s`. */
export function lit(s: string): string {
  let out = '"';
  for (const ch of s) {
    const cp = ch.codePointAt(0)!;
    if (ch === '"' || ch === '\\') out += `\\${ch}`;
    else if (cp < 0x20 || cp === 0x7f) out += `\\x${cp.toString(16).padStart(2, '0')}`;
    else out += ch;
  }
  return `${out}"`;
}

/** A GBNF literal for `s` as it appears inside a JSON string (JSON-escaped first). */
export const jsonLit = (s: string): string => lit(JSON.stringify(s).slice(1, -1));

const classChar = (cp: number): string =>
  /[A-Za-z0-9]/.test(String.fromCharCode(cp)) ? String.fromCharCode(cp) : cp < 0x100 ? `\\x${cp.toString(16).padStart(2, '0')}` : `\\u${cp.toString(16).padStart(4, '0')}`;

/** A GBNF character class of `ranges` (negated with `neg`). */
export function charClass(ranges: [number, number][], neg = false): string {
  const body = ranges.map(([lo, hi]) => (lo === hi ? classChar(lo) : `${classChar(lo)}-${classChar(hi)}`)).join('');
  return `[${neg ? '^' : ''}${body}]`;
}

/** Characters a JSON string cannot hold raw: `"`, `\`, the controls (and DEL, kept out for the model's sake). */
export const JSON_RAW_EXCLUDED: [number, number][] = [[0x00, 0x1f], [0x22, 0x22], [0x5c, 0x5c], [0x7f, 0x7f]];

/** Subtracts sorted `cut` ranges from sorted `ranges`. */
export function subtract(ranges: [number, number][], cut: [number, number][]): [number, number][] {
  return normalize(ranges).flatMap(([lo, hi]) => {
    let parts: [number, number][] = [[lo, hi]];
    for (const [a, b] of cut) {
      parts = parts.flatMap(([x, y]): [number, number][] => (b < x || a > y ? [[x, y]] : [
        ...(a > x ? [[x, a - 1] as [number, number]] : []), ...(b < y ? [[b + 1, y] as [number, number]] : [])]));
    }
    return parts;
  });
}
