// JSON schema -> GBNF (llama.cpp's grammar language), so the llama.cpp backend enforces a structured_output schema
// while it generates: patterns, formats, lengths, integer and number bounds, arrays, objects, $ref, oneOf/anyOf.
// What a grammar cannot say is relaxed to its type's grammar and listed in `relaxed` (ajv still validates every
// answer). Pure; its work is bounded: a grammar over `maxSize` elements, or nested deeper than MAX_DEPTH, is refused.
import { integerBounds, integerRange, numberRange, type Bounds } from './gbnf-numbers.js';
import {
  charClass, JSON_RAW_EXCLUDED, jsonLit, lengthRange, lit, normalize, parsePattern, subtract, UnsupportedPattern,
  type RNode,
} from './gbnf-regex.js';

export interface GbnfOptions {
  /** The random-weights demo model: strings, arrays and open repetitions are capped so that it terminates. */
  demo: boolean;
  /** Largest grammar, in elements after llama.cpp expands bounded repetitions (INFERENCE_GRAMMAR_MAX_SIZE). */
  maxSize: number;
}

export type GbnfConversion =
  | { ok: true; grammar: string; size: number; relaxed: string[] }
  | { ok: false; reason: string };

export const DEMO_STRING_CAP = 24;
export const DEMO_ITEMS_CAP = 3;
/** One bounded repetition beyond this keeps only its lower bound (llama.cpp's parser refuses some near 2000). */
export const MAX_REPEAT = 1000;
export const MAX_DEPTH = 64;
/** What ends every answer: node-llama-cpp's stop trigger for JSON grammars (trimmed from the text). */
export const GRAMMAR_END = '\n\n\n\n';

const ANNOTATIONS = new Set(['title', 'description', '$schema', '$id', '$comment', '$anchor', 'examples', 'default',
  'deprecated', 'readOnly', 'writeOnly', '$defs', 'definitions', 'contentMediaType', 'contentEncoding']);
const TYPES = ['object', 'array', 'string', 'number', 'integer', 'boolean', 'null'] as const;

type S = Record<string, unknown>;
class TooLarge extends Error {}

const FIXED_RULES: Record<string, string> = {
  ws: '( " " | "\\n" [ \\t]{0,20} )?',
  'json-char': '[^"\\\\\\x00-\\x1f\\x7f] | "\\\\" ( ["\\\\/bfnrt] | "u" [0-9a-fA-F]{4} )',
  boolean: '"true" | "false"',
  null: '"null"',
  integer: '"-"? ( "0" | [1-9] [0-9]{0,15} )',
  number: 'integer ( "." [0-9]{1,15} )? ( [eE] [-+]? [0-9]{1,2} )?',
  'hex4': '[0-9a-fA-F]{4}',
  'date': '[0-9]{4} "-" ( ( "0" [13578] | "1" [02] ) "-" ( "0" [1-9] | [12] [0-9] | "3" [01] )'
    + ' | ( "0" [469] | "11" ) "-" ( "0" [1-9] | [12] [0-9] | "30" ) | "02" "-" ( "0" [1-9] | "1" [0-9] | "2" [0-8] ) )',
  'time': '( [01] [0-9] | "2" [0-3] ) ":" [0-5] [0-9] ":" [0-5] [0-9] ( "." [0-9]{1,6} )? ( "Z" | [+-] ( [01] [0-9] | "2" [0-3] ) ":" [0-5] [0-9] )',
  'ipv4-octet': '"25" [0-5] | "2" [0-4] [0-9] | "1" [0-9] [0-9] | [1-9]? [0-9]',
  'host-label': '[a-z0-9] ( [a-z0-9-]{0,20} [a-z0-9] )?',
};

/** Inner grammar (between the quotes) of each string format we enforce; others are only validated. */
const FORMATS: Record<string, string> = {
  date: 'date',
  time: 'time',
  'date-time': 'date "T" time',
  uuid: 'hex4 hex4 "-" hex4 "-" hex4 "-" hex4 "-" hex4 hex4 hex4',
  email: '[a-z0-9_+-]{1,24} ( "." [a-z0-9_+-]{1,24} )? "@" host-label ( "." host-label )? "." [a-z]{2,6}',
  ipv4: 'ipv4-octet "." ipv4-octet "." ipv4-octet "." ipv4-octet',
  uri: '"http" "s"? "://" host-label ( "." host-label ){0,3} ( "/" [a-zA-Z0-9._~-]{0,24} ){0,4} ( "?" [a-zA-Z0-9._~=&-]{0,24} )?',
};

const ruleName = (hint: string): string => hint.replace(/[^a-zA-Z0-9-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 40) || 'r';
const elements = (body: string): number => body.split(/\s+/).length;

class Builder {
  readonly rules = new Map<string, string>();
  private byBody = new Map<string, string>();
  private refs = new Map<string, string>();
  readonly used = new Set<string>();
  size = 0;
  readonly relaxed: string[] = [];

  constructor(private root: S, private opts: GbnfOptions) {}

  private grow(n: number): void {
    this.size += n;
    if (this.size > this.opts.maxSize) throw new TooLarge();
  }

  /** A named rule for `body` (one per distinct body); returns its name. */
  define(hint: string, body: string): string {
    const found = this.byBody.get(body);
    if (found) return found;
    const base = ruleName(hint);
    let name = base;
    for (let i = 2; this.rules.has(name) || name in FIXED_RULES || name === 'root'; i++) name = `${base}-${i}`;
    this.rules.set(name, body);
    this.byBody.set(body, name);
    this.grow(elements(body));
    return name;
  }

  /** A fixed helper rule, emitted once when used. */
  fixed(name: string): string {
    if (!this.used.has(name)) {
      this.used.add(name);
      this.grow(elements(FIXED_RULES[name]));
      for (const dep of Object.keys(FIXED_RULES)) if (dep !== name && new RegExp(`(^|[\\s(])${dep}($|[\\s)])`).test(FIXED_RULES[name])) this.fixed(dep);
    }
    return name;
  }

  relax(path: string, what: string): void { this.relaxed.push(`${path || '/'}: ${what}`); }

  /** `atom` (a rule name, literal or class) repeated min..max times; an open or over-large bound is capped or dropped. */
  rep(atom: string, min: number, max: number | undefined, path: string, what: string): string {
    if (this.opts.demo && max === undefined) max = Math.max(min, DEMO_STRING_CAP);
    if (max !== undefined && max > MAX_REPEAT) { this.relax(path, `${what} above ${MAX_REPEAT}`); max = undefined; }
    if (min > MAX_REPEAT) { this.relax(path, `${what} above ${MAX_REPEAT}`); min = 0; }
    this.grow((max ?? min + 1) * (atom.startsWith('"') || atom.startsWith('[') ? elements(atom) : 1));
    if (max === 0) return '';
    if (min === 0 && max === undefined) return `${atom}*`;
    if (min === 1 && max === undefined) return `${atom}+`;
    if (min === 0 && max === 1) return `${atom}?`;
    if (min === max) return min === 1 ? atom : `${atom}{${min}}`;
    return `${atom}{${min},${max ?? ''}}`;
  }

  ws(): string { return this.fixed('ws'); }

  // ---- schemas ----

  value(s: unknown, path: string, depth: number): string {
    if (depth > MAX_DEPTH) throw new TooLarge();
    if (s === true || s === undefined) return this.anyValue(depth);
    if (typeof s !== 'object' || s === null || Array.isArray(s)) { this.relax(path, 'a schema that is not an object'); return this.anyValue(depth); }
    const o = s as S;
    if (typeof o.$ref === 'string') {
      if (Object.keys(o).some((k) => k !== '$ref' && !ANNOTATIONS.has(k))) this.relax(path, '$ref beside other keywords (the $ref is enforced)');
      return this.ref(o, path, depth);
    }
    if (o.const !== undefined) return this.literalValues([o.const]);
    if (Array.isArray(o.enum)) return this.literalValues(o.enum);
    for (const k of ['allOf', 'not', 'if', 'then', 'else', 'dependentSchemas', 'dependentRequired', 'unevaluatedProperties', 'unevaluatedItems']) {
      if (k in o) this.relax(path, k);
    }
    const alts = (o.anyOf ?? o.oneOf) as unknown[] | undefined;
    if (Array.isArray(alts) && alts.length) {
      const siblings = Object.keys(o).filter((k) => k !== 'anyOf' && k !== 'oneOf' && !ANNOTATIONS.has(k));
      if (!siblings.length) {
        const key = o.anyOf ? 'anyOf' : 'oneOf';
        return `( ${alts.map((a, i) => this.value(a, `${path}/${key}/${i}`, depth + 1)).join(' | ')} )`;
      }
      this.relax(path, `${o.anyOf ? 'anyOf' : 'oneOf'} beside other keywords (the other keywords are enforced)`);
    }
    const types = this.typesOf(o);
    if (types.length === 0) return this.anyValue(depth);
    const out = types.map((t) => this.typed(o, t, path, depth));
    return out.length === 1 ? out[0] : `( ${out.join(' | ')} )`;
  }

  private typesOf(o: S): string[] {
    if (typeof o.type === 'string') return [o.type];
    if (Array.isArray(o.type)) return o.type.filter((t): t is string => typeof t === 'string');
    if (o.properties || o.additionalProperties !== undefined || o.required) return ['object'];
    if (o.items || o.prefixItems) return ['array'];
    if (o.pattern || o.format || o.minLength !== undefined || o.maxLength !== undefined) return ['string'];
    if (['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'].some((k) => k in o)) return ['number'];
    return [];
  }

  private typed(o: S, t: string, path: string, depth: number): string {
    switch (t) {
      case 'object': return this.object(o, path, depth);
      case 'array': return this.array(o, path, depth);
      case 'string': return this.string(o, path);
      case 'integer': return this.integer(o, path);
      case 'number': return this.number(o, path);
      case 'boolean': return this.fixed('boolean');
      case 'null': return this.fixed('null');
      default: this.relax(path, `type ${t}`); return this.anyValue(depth);
    }
  }

  private literalValues(values: unknown[]): string {
    const body = values.map((v) => lit(JSON.stringify(v))).join(' | ') || '"null"';
    this.grow(elements(body));
    return values.length > 1 ? `( ${body} )` : body;
  }

  private ref(o: S, path: string, depth: number): string {
    const ref = o.$ref as string;
    const known = this.refs.get(ref);
    if (known) return known;
    const m = /^#(\/.*)?$/.exec(ref);
    const target = m ? resolvePointer(this.root, m[1] ?? '') : undefined;
    if (target === undefined) { this.relax(path, `$ref ${ref} (only local refs are followed)`); return this.anyValue(depth); }
    const name = this.define(`ref-${ref.split('/').pop()}`, `__pending_${ref}`);
    this.refs.set(ref, name);
    const body = this.value(target, ref.slice(1), depth + 1);
    this.byBody.delete(`__pending_${ref}`);
    this.rules.set(name, body);
    this.grow(elements(body));
    return name;
  }

  /** Any JSON value (demo: strings and lists capped). */
  anyValue(depth: number): string {
    if (this.rules.has('any-value')) return 'any-value';
    if (depth > MAX_DEPTH) throw new TooLarge();
    const ws = this.ws();
    this.rules.set('any-value', '__pending');
    const str = this.plainString(undefined, undefined, '', 'a string');
    const item = `any-value`;
    const more = this.define('any-more', `"," ${ws} any-value`);
    const pair = this.define('any-pair', `${str} ${ws} ":" ${ws} any-value`);
    const morePairs = this.define('any-more-pair', `"," ${ws} ${pair}`);
    const list = `"[" ${ws} ( ${item} ${ws} ${this.rep(more, 0, this.opts.demo ? DEMO_ITEMS_CAP - 1 : undefined, '', 'items')} )? ${ws} "]"`;
    const obj = `"{" ${ws} ( ${pair} ${ws} ${this.rep(morePairs, 0, this.opts.demo ? DEMO_ITEMS_CAP - 1 : undefined, '', 'properties')} )? ${ws} "}"`;
    const body = [this.define('any-object', obj), this.define('any-array', list), str, this.fixed('number'), this.fixed('boolean'), this.fixed('null')].join(' | ');
    this.rules.set('any-value', body);
    this.grow(elements(body));
    return 'any-value';
  }

  private plainString(min: number | undefined, max: number | undefined, path: string, what: string): string {
    const lo = min ?? 0;
    const hi = this.opts.demo ? Math.min(max ?? Infinity, Math.max(DEMO_STRING_CAP, lo)) : max;
    const body = `"\\"" ${this.rep(this.fixed('json-char'), lo, hi, path, what)} "\\""`;
    return this.define(`string-${lo}-${hi ?? 'n'}`, body);
  }

  private string(o: S, path: string): string {
    const min = typeof o.minLength === 'number' ? o.minLength : undefined;
    const max = typeof o.maxLength === 'number' ? o.maxLength : undefined;
    if (typeof o.format === 'string') {
      const f = FORMATS[o.format];
      if (f) {
        if (o.pattern !== undefined) this.relax(path, 'pattern beside format (the format is enforced)');
        if (min !== undefined || max !== undefined) this.relax(path, 'minLength/maxLength beside format');
        for (const dep of f.match(/[a-z][a-z0-9-]*/g) ?? []) if (dep in FIXED_RULES) this.fixed(dep);
        this.grow(elements(f));
        return this.define(`string-${o.format}`, `"\\"" ${f} "\\""`);
      }
      this.relax(path, `format ${o.format}`);
    }
    if (typeof o.pattern === 'string') {
      try {
        const [inner, lo, hi] = this.pattern(o.pattern, path);
        if ((min !== undefined && lo < min) || (max !== undefined && hi > max)) this.relax(path, 'minLength/maxLength beside pattern (the pattern is enforced)');
        return this.define('string-pattern', `"\\"" ${inner} "\\""`);
      } catch (e) {
        if (!(e instanceof UnsupportedPattern)) throw e;
        this.relax(path, `pattern (${e.message})`);
      }
    }
    return this.plainString(min, max, path, 'maxLength');
  }

  /** The GBNF of a pattern (search semantics: an unanchored side admits any characters) and its length range. */
  private pattern(pattern: string, path: string): [string, number, number] {
    const branches = parsePattern(pattern);
    let lo = Infinity, hi = 0;
    const alts = branches.map((b) => {
      const [l, h] = lengthRange(b.node);
      const free = (): string => this.rep(this.fixed('json-char'), 0, undefined, path, 'pattern');
      const parts = [b.start ? '' : free(), this.regex(b.node, path), b.end ? '' : free()].filter(Boolean);
      lo = Math.min(lo, l);
      hi = Math.max(hi, b.start && b.end ? h : Infinity);
      return parts.join(' ') || '""';
    });
    return [alts.length === 1 ? alts[0] : `( ${alts.join(' | ')} )`, lo, hi];
  }

  private regex(n: RNode, path: string): string {
    switch (n.k) {
      case 'any': return charClass(normalize([...JSON_RAW_EXCLUDED, [0x2028, 0x2029]]), true);
      case 'set': return this.charSet(n.ranges, n.neg);
      case 'seq': return n.items.map((x) => this.regex(x, path)).filter(Boolean).join(' ') || '""';
      case 'alt': return `( ${n.items.map((x) => this.regex(x, path) || '""').join(' | ')} )`;
      case 'rep': {
        const inner = this.regex(n.node, path);
        const atom = /^(\[[^\]]*\]|"[^"]*"|[a-z0-9-]+)$/.test(inner) ? inner : this.define('pattern-part', inner);
        return this.rep(atom, n.min, n.max, path, 'pattern repetition');
      }
    }
  }

  /** One character of a class, as it appears in JSON text: raw where JSON allows, else its escape. */
  private charSet(ranges: [number, number][], neg: boolean): string {
    if (neg) return charClass(normalize([...ranges, ...JSON_RAW_EXCLUDED]), true);
    const raw = subtract(ranges, JSON_RAW_EXCLUDED);
    const escaped: string[] = [];
    for (const [a, b] of JSON_RAW_EXCLUDED) {
      for (let cp = a; cp <= b; cp++) if (ranges.some(([x, y]) => cp >= x && cp <= y)) escaped.push(jsonLit(String.fromCharCode(cp)));
    }
    const one = raw.length === 1 && raw[0][0] === raw[0][1] && !escaped.length;
    const alts = [...(one ? [lit(String.fromCharCode(raw[0][0]))] : raw.length ? [charClass(raw)] : []), ...escaped];
    this.grow(alts.length);
    if (alts.length === 0) throw new UnsupportedPattern('an empty class');
    return alts.length === 1 ? alts[0] : `( ${alts.join(' | ')} )`;
  }

  private bounds(o: S): Bounds {
    const num = (k: string): number | undefined => (typeof o[k] === 'number' && Number.isFinite(o[k]) ? o[k] as number : undefined);
    const [min, xmin, max, xmax] = [num('minimum'), num('exclusiveMinimum'), num('maximum'), num('exclusiveMaximum')];
    const lo = xmin !== undefined && (min === undefined || xmin >= min) ? { min: xmin, exclusiveMin: true } : { min };
    const hi = xmax !== undefined && (max === undefined || xmax <= max) ? { max: xmax, exclusiveMax: true } : { max };
    return { ...lo, ...hi };
  }

  private integer(o: S, path: string): string {
    const b = this.bounds(o);
    const step = typeof o.multipleOf === 'number' && Number.isInteger(o.multipleOf) && o.multipleOf > 1 ? o.multipleOf : undefined;
    const [lo, hi] = integerBounds(b);
    if (step !== undefined) {
      const first = lo === undefined ? undefined : Math.ceil(Number(lo) / step), last = hi === undefined ? undefined : Math.floor(Number(hi) / step);
      if (first !== undefined && last !== undefined && last >= first && last - first < 256) {
        return this.literalValues(Array.from({ length: last - first + 1 }, (_, i) => (first + i) * step));
      }
      this.relax(path, 'multipleOf (over 256 values)');
    } else if (o.multipleOf !== undefined && o.multipleOf !== 1) this.relax(path, 'multipleOf');
    if (lo === undefined && hi === undefined) return this.fixed('integer');
    const body = integerRange(lo, hi);
    if (!body) { this.relax(path, 'minimum/maximum (no integer of at most 16 digits fits)'); return this.fixed('integer'); }
    return this.define(`integer-${lo ?? 'n'}-${hi ?? 'n'}`, body);
  }

  private number(o: S, path: string): string {
    if (o.multipleOf !== undefined) {
      if (typeof o.multipleOf === 'number' && Number.isInteger(o.multipleOf)) return this.integer(o, path);
      this.relax(path, 'multipleOf');
    }
    const b = this.bounds(o);
    if (b.min === undefined && b.max === undefined) return this.fixed('number');
    const body = numberRange(b);
    if (!body) { this.relax(path, 'minimum/maximum'); return this.fixed('number'); }
    return this.define('number-range', body);
  }

  private array(o: S, path: string, depth: number): string {
    const ws = this.ws();
    const min = typeof o.minItems === 'number' ? o.minItems : 0;
    let max = typeof o.maxItems === 'number' ? o.maxItems : undefined;
    if (this.opts.demo) max = Math.min(max ?? Infinity, Math.max(DEMO_ITEMS_CAP, min));
    for (const k of ['uniqueItems', 'contains', 'minContains', 'maxContains']) if (k in o) this.relax(path, k);
    // a tuple: draft-07's `items: [...]` with `additionalItems` (the dialect ajv validates), or 2020-12's `prefixItems`
    const [tupleKey, restKey] = Array.isArray(o.items) ? ['items', 'additionalItems'] : ['prefixItems', 'items'];
    const prefix = Array.isArray(o[tupleKey]) ? (o[tupleKey] as unknown[]).slice(0, max ?? undefined) : [];
    const seq = prefix.map((p, i) => this.value(p, `${path}/${tupleKey}/${i}`, depth + 1));
    const rest = o[restKey] === false ? undefined : this.value(o[restKey], `${path}/${restKey}`, depth + 1);
    const restMin = Math.max(0, min - seq.length), restMax = max === undefined ? undefined : Math.max(0, max - seq.length);
    let body: string;
    if (seq.length) {
      const head = seq.join(` ${ws} "," ${ws} `);
      const tail = rest === undefined || restMax === 0 ? '' : this.rep(this.define('array-more', `"," ${ws} ${rest}`), restMin, restMax, path, 'maxItems');
      body = `"[" ${ws} ${head} ${ws} ${tail} ${ws} "]"`;
    } else if (rest === undefined || restMax === 0) {
      body = `"[" ${ws} "]"`;
    } else {
      const item = this.define('array-item', rest);
      const more = this.define('array-more', `"," ${ws} ${item}`);
      const list = `${item} ${ws} ${this.rep(more, Math.max(0, restMin - 1), restMax === undefined ? undefined : restMax - 1, path, 'maxItems')}`;
      body = `"[" ${ws} ${restMin > 0 ? list : `( ${list} )?`} ${ws} "]"`;
    }
    return this.define('array', body.replace(/\s+/g, ' '));
  }

  private object(o: S, path: string, depth: number): string {
    const ws = this.ws();
    const props: S = { ...(o.properties && typeof o.properties === 'object' ? o.properties : {}) };
    const required = new Set(Array.isArray(o.required) ? o.required.filter((r): r is string => typeof r === 'string') : []);
    for (const k of ['patternProperties', 'propertyNames', 'minProperties', 'maxProperties']) if (k in o) this.relax(path, k);
    const names = Object.keys(props);
    for (const r of required) if (!(r in props)) { names.push(r); props[r] = true; }
    const ap = o.additionalProperties;
    const extras = ap !== false && !this.opts.demo && (ap !== undefined || names.length === 0);
    const kv = names.map((n) => this.define(`kv-${n}`, `${lit(JSON.stringify(n))} ${ws} ":" ${ws} ${this.value(props[n], `${path}/properties/${n}`, depth + 1)}`));
    // start_i: nothing written yet, properties i.. to go; rest_i: something written, so each needs a comma first
    let start = '', rest = '';
    if (extras) {
      const pair = this.define('kv-extra', `${this.plainString(undefined, undefined, path, 'property name')} ${ws} ":" ${ws} ${this.value(ap === undefined ? true : ap, `${path}/additionalProperties`, depth + 1)}`);
      const more = this.define('kv-extra-more', `${ws} "," ${ws} ${pair}`);
      rest = this.rep(more, 0, undefined, path, 'properties');
      start = `( ${pair} ${rest} )?`;
    }
    for (let i = names.length - 1; i >= 0; i--) {
      const restName = rest ? this.define(`rest-${names[i]}`, rest) : '';
      const startName = start ? this.define(`start-${names[i]}`, start) : '';
      const withIt = `${kv[i]} ${restName}`.trim();
      const comma = `${ws} "," ${ws} ${withIt}`;
      if (required.has(names[i])) { start = withIt; rest = comma; }
      else { start = startName ? `${withIt} | ${startName}` : `( ${withIt} )?`; rest = restName ? `${comma} | ${restName}` : `( ${comma} )?`; }
    }
    return this.define('object', `"{" ${ws} ${start ? `( ${start} )` : ''} ${ws} "}"`.replace(/\s+/g, ' '));
  }
}

function resolvePointer(root: unknown, pointer: string): unknown {
  let cur = root;
  for (const raw of pointer.split('/').slice(1)) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (!cur || typeof cur !== 'object' || !(key in (cur as S))) return undefined;
    cur = (cur as S)[key];
  }
  return cur;
}

/**
 * The GBNF grammar of `schema` for node-llama-cpp's `llama.createGrammar`, ending with GRAMMAR_END; or why none
 * (too large or too deep: the caller then uses the generic JSON grammar). Never throws on a schema.
 */
export function schemaToGbnf(schema: Record<string, unknown>, opts: GbnfOptions): GbnfConversion {
  const b = new Builder(schema, opts);
  let top: string;
  try {
    top = b.value(schema, '', 0);
  } catch (e) {
    if (e instanceof TooLarge) return { ok: false, reason: `the grammar would exceed ${opts.maxSize} elements or ${MAX_DEPTH} levels` };
    throw e;
  }
  const lines = [`root ::= ( ${top} ) ${lit(GRAMMAR_END)} [\\n]*`];
  for (const [name, body] of b.rules) lines.push(`${name} ::= ${body}`);
  for (const [name, body] of Object.entries(FIXED_RULES)) if (b.used.has(name)) lines.push(`${name} ::= ${body}`);
  return { ok: true, grammar: `${lines.join('\n')}\n`, size: b.size, relaxed: b.relaxed };
}
