// Parses Pebble-style templates into an AST using nunjucks' lexer and parser, patched for Pebble
// syntax (`?`/`??`/`???`, ternary, `contains`), then checks the tree against an allow-list of nodes.
import { createRequire } from 'node:module';
import { ExpressionError, excerpt } from './errors.js';

const require = createRequire(import.meta.url);
// nunjucks ships no types for its internals; these are the only loose-typed imports of the engine.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const lexer = require('nunjucks/src/lexer.js') as any;
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const { Parser } = require('nunjucks/src/parser.js') as { Parser: any };

/** An AST node: nunjucks nodes and our own Pebble nodes share this shape. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Node = { typename: string; lineno: number; colno: number; fields?: string[]; [field: string]: any };

export interface ParsedTemplate {
  root: Node;
  /** The expression when the template is exactly one `{{ expr }}` (surrounding whitespace allowed). */
  single: Node | null;
}

const ALLOWED = new Set([
  'Root', 'NodeList', 'Output', 'TemplateData', 'Literal', 'Symbol', 'LookupVal', 'FunCall', 'Filter',
  'KeywordArgs', 'Pair', 'Group', 'Array', 'Dict', 'Is', 'Compare', 'CompareOperand', 'InlineIf',
  'Ternary', 'Coalesce', 'Contains', 'In', 'And', 'Or', 'Not', 'Add', 'Sub', 'Mul', 'Div', 'FloorDiv',
  'Mod', 'Pow', 'Neg', 'Pos', 'Concat', 'If', 'For', 'Set', 'Capture', 'Range',
]);

function custom(typename: string, at: Node, props: Record<string, unknown>): Node {
  return { typename, lineno: at.lineno, colno: at.colno, fields: Object.keys(props), ...props };
}

/** Pebble's `a..b` range: emits `..` as an operator, and the integer before it as an int (not "1." float). */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
function rangeToken(tok: any): unknown {
  const { lineno, colno } = tok;
  if (tok.str.startsWith('..', tok.index)) {
    tok.forwardN(2);
    return { type: lexer.TOKEN_OPERATOR, value: '..', lineno, colno };
  }
  const digits = /^\d+(?=\.\.)/.exec(tok.str.slice(tok.index, tok.index + 32));
  if (!digits) return null;
  tok.forwardN(digits[0].length);
  return { type: lexer.TOKEN_INT, value: digits[0], lineno, colno };
}

/** Makes one tokenizer emit `?`, `??` and `???` as operators inside code sections. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
function patchTokenizer(tok: any): void {
  const next = tok.nextToken.bind(tok);
  const extractUntil = tok._extractUntil.bind(tok);
  tok.nextToken = () => {
    if (tok.in_code && !tok.isFinished()) {
      const range = rangeToken(tok);
      if (range) return range;
    }
    if (tok.in_code && !tok.isFinished() && tok.current() === '?') {
      const { lineno, colno } = tok;
      let op = '';
      while (op.length < 3 && tok.current() === '?') {
        op += '?';
        tok.forward();
      }
      return { type: lexer.TOKEN_OPERATOR, value: op, lineno, colno };
    }
    return next();
  };
  // Symbols and numbers are read "until a delimiter": make `?` one so `a??b` splits.
  tok._extractUntil = (chars: string) => extractUntil(chars && chars.includes('|') ? `${chars}?` : chars);
}

const NAME_TOKENS = new Set([lexer.TOKEN_SYMBOL, lexer.TOKEN_NONE, lexer.TOKEN_BOOLEAN, lexer.TOKEN_INT]);

class PebbleParser extends Parser {
  constructor(tokens: unknown) {
    super(tokens);
  }

  /** Pebble ternary `cond ? a : b`, lowest precedence, right-associative. */
  parseInlineIf(): Node {
    const node: Node = super.parseInlineIf();
    if (!this.skipValue(lexer.TOKEN_OPERATOR, '?')) return node;
    const body = this.parseInlineIf();
    if (!this.skip(lexer.TOKEN_COLON)) this.fail("expected ':' in ternary expression", node.lineno, node.colno);
    const else_ = this.parseInlineIf();
    return custom('Ternary', node, { cond: node, body, else_ });
  }

  /** `is` / `is not` tests and the `contains` operator (Pebble precedence: below comparisons). */
  parseIs(): Node {
    let node: Node = this.parseCompare();
    for (;;) {
      if (this.skipSymbol('is')) {
        const not = this.skipSymbol('not');
        const test: Node = this.parseCompare();
        node = custom('Is', node, { left: node, right: test });
        if (not) node = custom('Not', node, { target: node });
      } else if (this.skipSymbol('contains')) {
        node = custom('Contains', node, { left: node, right: this.parseCompare() });
      } else {
        return node;
      }
    }
  }

  /** Calls, `[key]` and `.name` lookups; after a dot, `null`/`none`/`true`/`false`/digits are names too. */
  parsePostfix(start: Node): Node {
    let node = start;
    for (let tok = this.peekToken(); tok; tok = this.peekToken()) {
      if (tok.type === lexer.TOKEN_LEFT_PAREN) {
        node = custom('FunCall', tok, { name: node, args: this.parseSignature() });
      } else if (tok.type === lexer.TOKEN_LEFT_BRACKET) {
        const lookup: Node = this.parseAggregate();
        if (lookup.children.length !== 1) this.fail('invalid index', tok.lineno, tok.colno);
        node = custom('LookupVal', tok, { target: node, val: lookup.children[0] });
      } else if (tok.type === lexer.TOKEN_OPERATOR && tok.value === '.') {
        this.nextToken();
        const val = this.nextToken();
        if (!val || !NAME_TOKENS.has(val.type)) this.fail(`expected name after '.', got ${val?.value}`, tok.lineno, tok.colno);
        node = custom('LookupVal', tok, { target: node, val: custom('Literal', val, { value: String(val.value) }) });
      } else {
        return node;
      }
    }
    return node;
  }

  /** Unary minus/plus, then any mix of `| filter`, `?? x` / `??? x` and `..` ranges, left to right. */
  parseUnary(noFilters?: boolean): Node {
    const tok = this.peekToken();
    let node: Node;
    if (this.skipValue(lexer.TOKEN_OPERATOR, '-')) node = custom('Neg', tok, { target: this.parseUnary(true) });
    else if (this.skipValue(lexer.TOKEN_OPERATOR, '+')) node = custom('Pos', tok, { target: this.parseUnary(true) });
    else node = this.parsePrimary();
    if (noFilters) return node;
    for (;;) {
      if (this.skip(lexer.TOKEN_PIPE)) {
        const name: Node = this.parseFilterName();
        const args: Node[] = this.parseFilterArgs(name);
        node = custom('Filter', name, { name, args: custom('NodeList', name, { children: [node, ...args] }) });
        continue;
      }
      const next = this.peekToken();
      if (next && next.type === lexer.TOKEN_OPERATOR && next.value === '..') {
        this.nextToken();
        node = custom('Range', node, { left: node, right: this.parseUnary(true) });
        continue;
      }
      if (next && next.type === lexer.TOKEN_OPERATOR && (next.value === '??' || next.value === '???')) {
        this.nextToken();
        node = custom('Coalesce', node, { left: node, right: this.parseUnary(true), op: next.value });
        continue;
      }
      return node;
    }
  }
}

/** The child nodes of a node, in field order. */
export function childNodes(node: Node): Node[] {
  const out: Node[] = [];
  const fields = node.fields ?? [];
  for (const field of fields) {
    const value = node[field];
    if (Array.isArray(value)) out.push(...value.filter(isNode));
    else if (isNode(value)) out.push(value);
  }
  return out;
}

function isNode(value: unknown): value is Node {
  return typeof value === 'object' && value !== null && typeof (value as Node).typename === 'string';
}

function validate(node: Node, src: string): void {
  if (!ALLOWED.has(node.typename)) {
    throw new ExpressionError(`Unsupported tag or syntax \`${node.typename.toLowerCase()}\` in \`${excerpt(src)}\``);
  }
  if (node.typename === 'Literal' && node.value instanceof RegExp) {
    throw new ExpressionError(`Regular expression literals are not supported in \`${excerpt(src)}\``);
  }
  if (node.typename === 'FunCall' && node.name.typename !== 'Symbol') {
    throw new ExpressionError(`Only named functions can be called (no method calls) in \`${excerpt(src)}\``);
  }
  if (node.typename === 'For' || node.typename === 'Set') {
    const names: Node[] = node.typename === 'Set' ? node.targets
      : node.name.typename === 'Array' ? node.name.children : [node.name];
    if (!names.every((n) => n.typename === 'Symbol')) {
      throw new ExpressionError(`Loop and set targets must be plain names in \`${excerpt(src)}\``);
    }
  }
  for (const child of childNodes(node)) validate(child, src);
}

function findSingle(root: Node): Node | null {
  const meaningful = (root.children as Node[]).filter(
    (n) => !(n.typename === 'Output' && n.children.length === 1 && n.children[0].typename === 'TemplateData'
      && String(n.children[0].value).trim() === ''),
  );
  if (meaningful.length !== 1) return null;
  const out = meaningful[0];
  if (out.typename !== 'Output' || out.children.length !== 1) return null;
  return out.children[0].typename === 'TemplateData' ? null : out.children[0];
}

function cleanMessage(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/^\(unknown path\)\s*/, '').replace(/\s*\n\s*/g, ' ').trim();
}

const CACHE_LIMIT = 2000;
const cache = new Map<string, ParsedTemplate>();

/** Parses (with a bounded LRU cache) a template; throws ExpressionError on bad syntax. */
export function parseTemplate(src: string): ParsedTemplate {
  const hit = cache.get(src);
  if (hit) {
    cache.delete(src);
    cache.set(src, hit);
    return hit;
  }
  let root: Node;
  try {
    const tokens = lexer.lex(src, {});
    patchTokenizer(tokens);
    root = new PebbleParser(tokens).parseAsRoot();
  } catch (error) {
    throw new ExpressionError(`Invalid expression in \`${excerpt(src)}\`: ${cleanMessage(error)}`);
  }
  validate(root, src);
  const parsed = { root, single: findSingle(root) };
  cache.set(src, parsed);
  if (cache.size > CACHE_LIMIT) cache.delete(cache.keys().next().value as string);
  return parsed;
}

/** True when a string may hold an expression, tag or comment; plain strings skip the parser entirely. */
export function hasTemplate(value: string): boolean {
  if (value.includes('{{') || value.includes('{%')) return true;
  const comment = value.indexOf('{#');
  return comment >= 0 && value.indexOf('#}', comment + 2) > 0;
}
