// String filters (case, trimming, substrings, replace/split, escaping, encodings, hashes) in Pebble
// and Kestra semantics.
import { createHash } from 'node:crypto';
import { arg, int, requireString, str } from './args.js';
import type { Budget } from './budget.js';
import { ExpressionError } from './errors.js';
import type { CallContext, FilterImpl } from './evaluate.js';
import { compileRegex, replaceAll } from './regex.js';
import { isPlainObject, stringify } from './values.js';

const one = (fn: (s: string) => string, what: string): FilterImpl => (input) => fn(str(input, what));

/** Literal replacement; the result's size is known, and refused, before it is built. */
function replaceLiteral(text: string, from: string, to: string, budget: Budget): string {
  let count = 0;
  if (from === '') count = Math.max(0, text.length - 1);
  else for (let at = text.indexOf(from); at >= 0; at = text.indexOf(from, at + from.length)) count++;
  budget.reserve(text.length + count * (to.length - from.length));
  return text.split(from).join(to);
}

/** `replace(target, replacement, regexp=false)` or `replace({target: replacement...}, regexp=false)`; regexps are RE2. */
function replaceFilter(input: unknown, args: unknown[], kwargs: Record<string, unknown>, ctx: CallContext): string {
  let out = str(input, 'replace');
  const first = arg(args, kwargs, 0, 'target');
  const pairs: [string, string][] = isPlainObject(first)
    ? Object.entries(first).map(([from, to]) => [from, stringify(to)])
    : [[requireString(first, 'replace'), stringify(arg(args, kwargs, 1, 'replacement'))]];
  const regexp = (isPlainObject(first) ? arg(args, kwargs, 1, 'regexp') : arg(args, kwargs, 2, 'regexp')) === true;
  for (const [from, to] of pairs) {
    out = regexp ? replaceAll(out, compileRegex(from, 'replace'), to, ctx.budget) : replaceLiteral(out, from, to, ctx.budget);
  }
  return out;
}

function splitFilter(input: unknown, args: unknown[], kwargs: Record<string, unknown>): string[] {
  const s = str(input, 'split');
  const delimiter = requireString(arg(args, kwargs, 0, 'delimiter'), 'split');
  const limit = arg(args, kwargs, 1, 'limit');
  const parts = s.split(delimiter);
  if (typeof limit !== 'number' || limit <= 0 || parts.length <= limit) return parts;
  return [...parts.slice(0, limit - 1), parts.slice(limit - 1).join(delimiter)];
}

function abbreviate(input: unknown, args: unknown[], kwargs: Record<string, unknown>): string {
  const s = str(input, 'abbreviate');
  const length = int(arg(args, kwargs, 0, 'length'), 'abbreviate');
  if (s.length <= length) return s;
  if (length < 3) return s.slice(0, Math.max(length, 0));
  return `${s.slice(0, length - 3)}...`;
}

function titleCase(s: string): string {
  return s.replace(/(^|\s)(\S)/g, (_m, space: string, ch: string) => space + ch.toUpperCase());
}

function cut(which: 'before' | 'after', last: boolean): FilterImpl {
  return (input, args, kwargs) => {
    const s = str(input, 'substring');
    const sep = str(arg(args, kwargs, 0, 'separator'), 'substring');
    const at = last ? s.lastIndexOf(sep) : s.indexOf(sep);
    if (at < 0) return which === 'before' ? s : '';
    return which === 'before' ? s.slice(0, at) : s.slice(at + sep.length);
  };
}

function escapeChar(input: unknown, args: unknown[], kwargs: Record<string, unknown>): string {
  const s = str(input, 'escapeChar');
  const type = String(arg(args, kwargs, 0, 'type') ?? '').toLowerCase();
  if (type === 'single') return s.replace(/\\/g, '\\\\').replace(/'/g, "\\'");
  if (type === 'double') return s.replace(/\\/g, '\\\\').replace(/"/g, '\\"');
  if (type === 'shell') return s.replace(/'/g, "'\\''");
  throw new ExpressionError(`escapeChar: unknown type \`${type}\` (single, double or shell)`);
}

function slugify(s: string): string {
  return s.normalize('NFD').replace(/[\u0300-\u036f]/g, '').toLowerCase()
    .replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '');
}

function indent(newlineFirst: boolean): FilterImpl {
  return (input, args, kwargs, ctx) => {
    const s = stringify(input);
    const amount = Math.max(int(arg(args, kwargs, 0, 'amount'), 'indent'), 0);
    const unit = stringify(arg(args, kwargs, 1, 'prefix') ?? ' ');
    ctx.budget.reserve(amount * unit.length);
    const prefix = unit.repeat(amount);
    const lines = s.split('\n');
    ctx.budget.reserve(s.length + lines.length * prefix.length + 1);
    const body = lines.map((line, i) => (i === 0 && !newlineFirst ? line : line === '' ? line : prefix + line));
    return (newlineFirst ? '\n' : '') + body.join('\n');
  };
}

function urlencode(s: string): string {
  return encodeURIComponent(s)
    .replace(/[!'()~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
    .replace(/%20/g, '+');
}

function hash(algorithm: string): FilterImpl {
  return (input) => createHash(algorithm).update(stringify(input), 'utf8').digest('hex');
}

function base64decode(s: string): string {
  if (!/^[A-Za-z0-9+/_-]*={0,2}$/.test(s.replace(/\s+/g, ''))) throw new ExpressionError('base64decode: invalid base64');
  return Buffer.from(s, 'base64').toString('utf8');
}

const HTML_ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => HTML_ESCAPES[c]);
}

export const TEXT_FILTERS: Record<string, FilterImpl> = {
  upper: one((s) => s.toUpperCase(), 'upper'),
  lower: one((s) => s.toLowerCase(), 'lower'),
  capitalize: one((s) => s.charAt(0).toUpperCase() + s.slice(1), 'capitalize'),
  title: one(titleCase, 'title'),
  trim: one((s) => s.trim(), 'trim'),
  replace: replaceFilter,
  split: splitFilter,
  abbreviate,
  startsWith: (input, args, kwargs) => str(input, 'startsWith').startsWith(str(arg(args, kwargs, 0, 'prefix'), 'startsWith')),
  endsWith: (input, args, kwargs) => str(input, 'endsWith').endsWith(str(arg(args, kwargs, 0, 'suffix'), 'endsWith')),
  substringBefore: cut('before', false),
  substringAfter: cut('after', false),
  substringBeforeLast: cut('before', true),
  substringAfterLast: cut('after', true),
  escapeChar,
  slugify: one(slugify, 'slugify'),
  indent: indent(false),
  nindent: indent(true),
  string: (input) => stringify(input),
  escape: (input) => escapeHtml(stringify(input)),
  e: (input) => escapeHtml(stringify(input)),
  raw: (input) => input,
  base64encode: (input) => Buffer.from(stringify(input), 'utf8').toString('base64'),
  base64decode: one(base64decode, 'base64decode'),
  urlencode: one(urlencode, 'urlencode'),
  urldecode: one((s) => decodeURIComponent(s.replace(/\+/g, ' ')), 'urldecode'),
  sha1: hash('sha1'),
  sha256: hash('sha256'),
  sha512: hash('sha512'),
  md5: hash('md5'),
};
