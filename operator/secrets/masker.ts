// The one masker of secret values: built from every known secret value, it replaces each value and its encoded forms
// (JSON escaping, standard and URL-safe base64 at any alignment, percent-encoding, hex) with Kestra's `******` in one
// regex pass per text. Pure: values in, a masker out; free when there is nothing to mask.

/** What a secret is replaced by (Kestra's mask). */
export const MASK = '******';
/**
 * Values shorter than this are never masked: masking `abc` or `42` would destroy ordinary text everywhere, and so short
 * a value protects nothing anyway. Encoded forms shorter than this are left out too.
 */
export const MIN_SECRET_LENGTH = 4;

export interface DeepOptions {
  /** Mask object keys too (default true; false for objects whose keys are the engine's own). */
  keys?: boolean;
  /** Strings (values and keys) left as they are (encrypted inputs). */
  keep?: (s: string) => boolean;
}

export interface Masker {
  /** How many secret values this masker covers (0: masking is the identity). */
  readonly size: number;
  readonly values: ReadonlySet<string>;
  /** The text with every secret value and encoded form replaced by `******`. */
  mask(text: string): string;
  /**
   * JSON-like data with every string and object key masked; unchanged parts are shared, and the value itself is
   * returned when nothing changed.
   */
  maskDeep<T>(value: T, opts?: DeepOptions): T;
  /** This masker plus more values. */
  with(values: Iterable<string>): Masker;
}

const utf8 = (s: string): Buffer => Buffer.from(s, 'utf8');

/** Base64 text of `value` placed at each of the 3 byte alignments inside a larger base64 text: only the characters that
 * depend on the value's bytes alone (a secret inside `Basic dXNlcjpzM2NyM3Q=` is found whatever precedes it). */
function base64Fragments(bytes: Buffer, alphabet: 'base64' | 'base64url'): string[] {
  const out: string[] = [];
  for (let shift = 0; shift < 3; shift++) {
    const text = Buffer.concat([Buffer.alloc(shift), bytes]).toString(alphabet);
    out.push(text.slice(Math.ceil((shift * 8) / 6), Math.floor(((shift + bytes.length) * 8) / 6)));
  }
  return out;
}

/** Every form in which `value` may appear in stored or returned text, the value itself first. */
export function encodedForms(value: string): string[] {
  const bytes = utf8(value);
  const json = JSON.stringify(value).slice(1, -1);
  const forms = [
    value,
    json,
    JSON.stringify(json).slice(1, -1), // JSON inside a JSON string (an error quoting a JSON text)
    bytes.toString('base64'), // Kestra's SECRET_<NAME> form
    bytes.toString('base64url'),
    ...base64Fragments(bytes, 'base64'),
    ...base64Fragments(bytes, 'base64url'),
    encodeURIComponent(value),
    new URLSearchParams({ v: value }).toString().slice(2), // form encoding (spaces as +)
    bytes.toString('hex'),
    bytes.toString('hex').toUpperCase(),
  ];
  return [...new Set(forms)].filter((f) => f.length >= MIN_SECRET_LENGTH);
}

const escapeChar = (c: string): string => (/[\\^$.*+?()[\]{}|/-]/.test(c) ? `\\${c}` : c === '\n' ? '\\n' : c === '\r' ? '\\r' : c);
const escape = (s: string): string => { let out = ''; for (const c of s) out += escapeChar(c); return out; };

/**
 * One regex source for many literals, factored like a trie (shared prefixes written once, greedy optional tails so the
 * longest literal wins), built from the sorted list without trie nodes. Chains without a branch are written flat, so a
 * long value does not nest groups.
 */
function trieSource(literals: Iterable<string>): string {
  const lits = [...literals].sort();
  // lits[lo, hi) are sorted and share their first `d` code units.
  const build = (lo: number, hi: number, d: number): string => {
    let end = false;
    while (lo < hi && lits[lo]!.length === d) { end = true; lo++; }
    const branches: string[] = [];
    for (let i = lo; i < hi;) {
      const c = lits[i]![d];
      let j = i + 1;
      while (j < hi && lits[j]![d] === c) j++;
      const first = lits[i]!, last = lits[j - 1]!;
      let l = d + 1;
      while (l < first.length && l < last.length && first[l] === last[l]) l++;
      branches.push(escape(first.slice(d, l)) + build(i, j, l));
      i = j;
    }
    const body = branches.length <= 1 ? (branches[0] ?? '') : `(?:${branches.join('|')})`;
    return end && body ? `(?:${body})?` : body;
  };
  return build(0, lits.length, 0);
}

class RegexMasker implements Masker {
  private readonly re: RegExp | undefined;

  constructor(readonly values: ReadonlySet<string>) {
    const forms = new Set<string>();
    for (const v of values) for (const f of encodedForms(v)) forms.add(f);
    this.re = forms.size ? new RegExp(trieSource(forms), 'g') : undefined;
  }

  get size(): number { return this.values.size; }

  mask(text: string): string {
    return this.re ? text.replace(this.re, MASK) : text;
  }

  maskDeep<T>(value: T, opts: DeepOptions = {}): T {
    return this.re ? this.deep(value, opts.keys ?? true, opts.keep) : value;
  }

  with(values: Iterable<string>): Masker {
    const more = [...values].filter((v) => maskable(v) && !this.values.has(v));
    return more.length ? new RegexMasker(new Set([...this.values, ...more])) : this;
  }

  private readonly maskText = (s: string): string => this.mask(s);

  private deep<T>(value: T, keys: boolean, keep?: (s: string) => boolean): T {
    if (value === undefined || value === null) return value;
    const leaf = keep ? (s: string): string => (keep(s) ? s : this.mask(s)) : this.maskText;
    return mapStrings(value, leaf, keys ? leaf : undefined);
  }
}

/**
 * JSON-like data (plain objects, arrays, scalars) with each string passed through `leaf`, and each object key through
 * `key` when given. Unchanged parts are shared, and the value itself is returned when nothing changed; objects of
 * other classes are left as they are.
 */
export function mapStrings<T>(value: T, leaf: (s: string) => string, key?: (k: string) => string): T {
  if (typeof value === 'string') return leaf(value) as T;
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    let out: unknown[] | undefined;
    for (let i = 0; i < value.length; i++) {
      const v: unknown = value[i];
      const m = mapStrings(v, leaf, key);
      if (m !== v) (out ??= value.slice())[i] = m;
    }
    return (out ?? value) as T;
  }
  const proto = Object.getPrototypeOf(value);
  if (proto !== Object.prototype && proto !== null) return value; // JSON-like data only
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj);
  let out: Record<string, unknown> | undefined;
  for (let i = 0; i < keys.length; i++) {
    const k = keys[i]!;
    const v = obj[k];
    const mk = key ? key(k) : k;
    const mv = mapStrings(v, leaf, key);
    if (!out && (mk !== k || mv !== v)) {
      // The first change: a copy of the entries before it, in order.
      out = Object.create(proto) as Record<string, unknown>;
      for (let j = 0; j < i; j++) out[keys[j]!] = obj[keys[j]!];
    }
    if (out) out[mk] = mv;
  }
  return (out ?? value) as T;
}

/** Values worth masking: long enough, and not made of the mask's own character (masking would feed on itself). */
export const maskable = (v: unknown): v is string => typeof v === 'string' && v.length >= MIN_SECRET_LENGTH && !/^\**$/.test(v);

/** A masker of `values` (values shorter than MIN_SECRET_LENGTH, or only asterisks, are ignored). */
export function createMasker(values: Iterable<string>): Masker {
  return new RegexMasker(new Set([...values].filter(maskable)));
}

/** The masker of no secrets (identity). */
export const NO_SECRETS: Masker = createMasker([]);
