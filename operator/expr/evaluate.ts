// Tree-walking interpreter for the parsed template AST. No code generation and no host method
// calls: only registered functions, filters and tests are callable, and lookups go through values.ts.
import { dict } from '../core/keyed.js';
import type { Budget } from './budget.js';
import { ExpressionError, excerpt } from './errors.js';
import type { Node } from './parse.js';
import type { RenderServices } from './types.js';
import {
  UNDEF, equalityKey, equals, isEmpty, isPlainObject, makeMap, memberLookup, pathSegment, stringify, toNumber, truthy,
  typeName,
} from './values.js';

export type Kwargs = Record<string, unknown>;

/** What functions and filters may use besides their arguments. */
export interface CallContext {
  readonly vars: Record<string, unknown>;
  /** Renders another template with the same variables (used by `render()`). */
  render(template: string): string;
  /** Variable lookup honouring `{% set %}`/loop scopes; UNDEF when absent. */
  lookup(name: string): unknown;
  readonly services: RenderServices;
  /** Time and size left to this rendering: filters that loop or build large values check it. */
  readonly budget: Budget;
}

export type FunctionImpl = (args: unknown[], kwargs: Kwargs, ctx: CallContext) => unknown;
export type FilterImpl = (input: unknown, args: unknown[], kwargs: Kwargs, ctx: CallContext) => unknown;
export type TestImpl = (value: unknown, args: unknown[]) => boolean;

export interface Registry {
  functions: Map<string, FunctionImpl>;
  filters: Map<string, FilterImpl>;
  tests: Map<string, TestImpl>;
}

type BinaryOp = (a: unknown, b: unknown) => unknown;

const ARITHMETIC: Record<string, BinaryOp> = {
  Add: (a, b) => (typeof a === 'string' || typeof b === 'string' ? stringify(a) + stringify(b) : num(a) + num(b)),
  Sub: (a, b) => num(a) - num(b),
  Mul: (a, b) => num(a) * num(b),
  Div: (a, b) => {
    const [x, y] = [num(a), num(b)];
    if (y === 0) throw new ExpressionError('Division by zero');
    return x / y;
  },
  FloorDiv: (a, b) => Math.floor(num(a) / num(b)),
  Mod: (a, b) => num(a) % num(b),
  Pow: (a, b) => num(a) ** num(b),
  Concat: (a, b) => stringify(a) + stringify(b),
};

function num(value: unknown): number {
  return toNumber(value, 'arithmetic');
}

function compare(op: string, a: unknown, b: unknown): boolean {
  switch (op) {
    case '==': case '===': return equals(a, b);
    case '!=': case '!==': return !equals(a, b);
    default: {
      const [x, y] = typeof a === 'string' && typeof b === 'string' ? [a, b] : [num(a), num(b)];
      if (op === '<') return x < y;
      if (op === '>') return x > y;
      if (op === '<=') return x <= y;
      return x >= y;
    }
  }
}

/** Pebble `contains`: map key, list element (or all elements of a list), substring. Linear in both sizes. */
export function contains(container: unknown, item: unknown): boolean {
  if (container === null || container === undefined) return false;
  if (typeof container === 'string') return container.includes(stringify(item));
  if (Array.isArray(container)) {
    if (!Array.isArray(item)) return container.some((y) => equals(item, y));
    const keys = new Set(container.map(equalityKey));
    return item.every((x) => {
      const key = equalityKey(x);
      return key !== undefined && keys.has(key);
    });
  }
  if (isPlainObject(container)) return Object.prototype.hasOwnProperty.call(container, stringify(item));
  throw new ExpressionError(`contains: unsupported ${typeName(container)}`);
}

/** The keyword arguments of a call that has none (shared, so it is frozen). */
const NO_KWARGS: Kwargs = Object.freeze(dict());


/** Text being output, with its running length (bounded by the budget). */
interface Out { parts: string[]; length: number }

export class Evaluator {
  private readonly frames: Map<string, unknown>[] = [new Map()];
  private readonly budget: Budget;

  constructor(
    private readonly registry: Registry,
    private readonly template: string,
    private readonly vars: Record<string, unknown>,
    private readonly ctx: CallContext,
  ) {
    this.budget = ctx.budget;
  }

  renderRoot(root: Node): string {
    const out: Out = { parts: [], length: 0 };
    this.exec(root.children, out);
    return out.parts.join('');
  }

  lookupName(name: string): unknown {
    for (let i = this.frames.length - 1; i >= 0; i--) {
      if (this.frames[i].has(name)) return this.frames[i].get(name);
    }
    return memberLookup(this.vars, name, name);
  }

  private exec(nodes: Node[], out: Out): void {
    for (const node of nodes) this.execOne(node, out);
  }

  private emit(out: Out, text: string): void {
    out.length += text.length;
    if (out.length > this.budget.maxBytes) throw this.budget.tooBig(`printed more than ${this.budget.maxBytes} bytes`);
    out.parts.push(text);
  }

  private execOne(node: Node, out: Out): void {
    this.budget.step();
    switch (node.typename) {
      case 'NodeList': return this.exec(node.children, out);
      case 'Output':
        for (const child of node.children as Node[]) {
          this.emit(out, child.typename === 'TemplateData' ? String(child.value) : stringify(this.eval(child)));
        }
        return;
      case 'If': {
        const branch = truthy(this.eval(node.cond)) ? node.body : node.else_;
        if (branch) this.execOne(branch, out);
        return;
      }
      case 'For': return this.execFor(node, out);
      case 'Set': return this.execSet(node);
      default: this.emit(out, stringify(this.eval(node)));
    }
  }

  private execSet(node: Node): void {
    const value = node.value ? this.eval(node.value) : this.eval(node.body);
    const frame = this.frames[this.frames.length - 1];
    for (const target of node.targets as Node[]) {
      if (target.typename !== 'Symbol') throw new ExpressionError('set: target must be a name');
      frame.set(target.value, value);
    }
  }

  private loopItems(node: Node, value: unknown): unknown[][] {
    const names = node.name.typename === 'Array' ? (node.name.children as Node[]).length : 1;
    if (value === null || value === undefined) return [];
    if (Array.isArray(value)) return value.map((v) => (names > 1 && Array.isArray(v) ? v : [v]));
    if (isPlainObject(value)) {
      return Object.entries(value).map(([k, v]) => (names > 1 ? [k, v] : [{ key: k, value: v }]));
    }
    throw new ExpressionError(`for: cannot iterate over a ${typeName(value)} in \`${excerpt(this.template)}\``);
  }

  private execFor(node: Node, out: Out): void {
    const items = this.loopItems(node, this.eval(node.arr));
    const names = (node.name.typename === 'Array' ? node.name.children : [node.name]) as Node[];
    if (items.length === 0) {
      if (node.else_) this.execOne(node.else_, out);
      return;
    }
    items.forEach((item, index) => {
      this.budget.step();
      const frame = new Map<string, unknown>();
      names.forEach((n, i) => frame.set(n.value, item[i] ?? null));
      frame.set('loop', {
        index, index0: index, length: items.length, first: index === 0, last: index === items.length - 1,
        revindex: items.length - index - 1,
      });
      this.frames.push(frame);
      try {
        this.execOne(node.body, out);
      } finally {
        this.frames.pop();
      }
    });
  }

  /** Evaluates an expression. In tolerant mode a missing variable yields UNDEF instead of throwing. */
  eval(node: Node, tolerant = false): unknown {
    this.budget.step();
    switch (node.typename) {
      case 'Literal': return node.value;
      case 'Symbol': return this.missing(this.lookupName(node.value), node.value, tolerant);
      case 'LookupVal': return this.evalLookup(node, tolerant);
      case 'Group':
        if (node.children.length !== 1) throw new ExpressionError(`Tuples are not supported in \`${excerpt(this.template)}\``);
        return this.eval(node.children[0], tolerant);
      case 'Array': return this.budget.built((node.children as Node[]).map((c) => this.eval(c)));
      case 'Dict': return this.budget.built(makeMap((node.children as Node[]).map((p) => [this.dictKey(p.key), this.eval(p.value)])));
      case 'FunCall': return this.evalCall(node);
      case 'Filter': return this.evalFilter(node, tolerant);
      case 'Is': return this.evalIs(node);
      case 'Coalesce': return this.evalCoalesce(node, tolerant);
      case 'Contains': return contains(this.eval(node.left), this.eval(node.right));
      case 'Range': return this.evalCall(node, 'range', [node.left, node.right]);
      case 'In': return contains(this.eval(node.right), this.eval(node.left));
      case 'Compare': return this.evalCompare(node);
      case 'InlineIf': case 'Ternary':
        if (truthy(this.eval(node.cond))) return this.eval(node.body);
        return node.else_ ? this.eval(node.else_) : '';
      case 'And': return truthy(this.eval(node.left)) && truthy(this.eval(node.right));
      case 'Or': return truthy(this.eval(node.left)) || truthy(this.eval(node.right));
      case 'Not': return !truthy(this.eval(node.target));
      case 'Neg': return -num(this.eval(node.target));
      case 'Pos': return num(this.eval(node.target));
      case 'Capture': {
        const out: Out = { parts: [], length: 0 };
        this.execOne(node.body, out);
        return out.parts.join('');
      }
      default: {
        const op = ARITHMETIC[node.typename];
        if (!op) throw new ExpressionError(`Unsupported expression \`${node.typename}\``);
        const result = op(this.eval(node.left), this.eval(node.right));
        return typeof result === 'string' ? this.budget.text(result) : result;
      }
    }
  }

  private missing(value: unknown, path: string, tolerant: boolean): unknown {
    if (value !== UNDEF || tolerant) return value;
    throw new ExpressionError(`Missing variable \`${path}\` in \`${excerpt(this.template)}\``);
  }

  private describe(node: Node): string {
    if (node.typename === 'Symbol') return node.value;
    if (node.typename === 'LookupVal') {
      const key = node.val.typename === 'Literal' ? pathSegment(node.val.value) : '[…]';
      return this.describe(node.target) + key;
    }
    return '(expression)';
  }

  private evalLookup(node: Node, tolerant: boolean): unknown {
    const target = this.eval(node.target, tolerant);
    if (target === UNDEF) return UNDEF;
    const key = node.val.typename === 'Literal' ? node.val.value : this.eval(node.val);
    const path = this.describe(node.target) + pathSegment(typeof key === 'number' ? key : String(key));
    return this.missing(memberLookup(target, key, path), path, tolerant);
  }

  private dictKey(key: Node): string {
    if (key.typename === 'Symbol') return key.value;
    return stringify(this.eval(key));
  }

  private evalArgs(nodes: Node[]): { args: unknown[]; kwargs: Kwargs } {
    const args: unknown[] = [];
    let named: [string, unknown][] | undefined;
    for (const n of nodes) {
      if (n.typename === 'KeywordArgs') {
        named ??= [];
        for (const pair of n.children as Node[]) named.push([this.dictKey(pair.key), this.eval(pair.value)]);
      } else {
        args.push(this.eval(n));
      }
    }
    return { args, kwargs: named ? makeMap(named) : NO_KWARGS };
  }

  private evalCall(node: Node, fixedName?: string, argNodes?: Node[]): unknown {
    const name: string = fixedName ?? node.name.value;
    const fn = this.registry.functions.get(name);
    if (!fn) throw new ExpressionError(`Unknown function \`${name}\` in \`${excerpt(this.template)}\``);
    const { args, kwargs } = this.evalArgs(argNodes ?? node.args.children);
    return this.budget.built(fn(args, kwargs, this.ctx));
  }

  private evalFilter(node: Node, tolerant: boolean): unknown {
    const name: string = node.name.value;
    const [inputNode, ...rest] = node.args.children as Node[];
    if (name === 'default') {
      const input = this.eval(inputNode, true);
      return isEmpty(input) ? (rest[0] ? this.eval(rest[0]) : null) : input;
    }
    const filter = this.registry.filters.get(name);
    if (!filter) throw new ExpressionError(`Unknown filter \`${name}\` in \`${excerpt(this.template)}\``);
    const input = this.eval(inputNode, tolerant);
    if (input === UNDEF) return UNDEF;
    const { args, kwargs } = this.evalArgs(rest);
    return this.budget.built(filter(input, args, kwargs, this.ctx));
  }

  private evalIs(node: Node): boolean {
    const right = node.right as Node;
    let name: string;
    let argNodes: Node[] = [];
    if (right.typename === 'Literal' && right.value === null) name = 'null';
    else if (right.typename === 'Symbol') name = right.value;
    else if (right.typename === 'FunCall') {
      name = right.name.value;
      argNodes = right.args.children;
    } else throw new ExpressionError(`Invalid test in \`${excerpt(this.template)}\``);
    if (name === 'defined') return this.eval(node.left, true) !== UNDEF;
    if (name === 'null' || name === 'none') {
      const value = this.eval(node.left, true);
      return value === UNDEF || value === null || value === undefined;
    }
    const test = this.registry.tests.get(name);
    if (!test) throw new ExpressionError(`Unknown test \`${name}\` in \`${excerpt(this.template)}\``);
    return test(this.eval(node.left), this.evalArgs(argNodes).args);
  }

  private evalCoalesce(node: Node, tolerant: boolean): unknown {
    const left = this.eval(node.left, true);
    const useRight = node.op === '???' ? left === UNDEF : left === UNDEF || left === null || left === undefined;
    return useRight ? this.eval(node.right, tolerant) : left;
  }

  private evalCompare(node: Node): boolean {
    let left = this.eval(node.expr);
    for (const op of node.ops as Node[]) {
      const right = this.eval(op.expr);
      if (!compare(op.type, left, right)) return false;
      left = right;
    }
    return true;
  }
}
