// Save-time check of one template: it parses, every function, filter and test it names exists, and every literal
// regular expression compiles on RE2. Uses the interpreter's registry, so the check and the run agree.
import { ExpressionError } from './errors.js';
import { childNodes, hasTemplate, parseTemplate, type Node } from './parse.js';
import { regexIssue } from './regex.js';
import { BUILTIN_FILTERS, BUILTIN_TESTS, REGISTRY } from './registry.js';

/** Problems of a template, as messages (empty when it is fine or holds no template). */
export function checkTemplate(text: string): string[] {
  if (!hasTemplate(text)) return [];
  let root: Node;
  try {
    root = parseTemplate(text).root;
  } catch (error) {
    return [error instanceof ExpressionError ? error.message : String(error)];
  }
  const issues = new Set<string>();
  visit(root, issues);
  return [...issues];
}

function visit(node: Node, issues: Set<string>): void {
  switch (node.typename) {
    case 'FunCall':
      if (!REGISTRY.functions.has(node.name.value)) issues.add(`unknown function \`${node.name.value}\``);
      break;
    case 'Filter':
      if (!BUILTIN_FILTERS.has(node.name.value) && !REGISTRY.filters.has(node.name.value)) issues.add(`unknown filter \`${node.name.value}\``);
      if (node.name.value === 'replace') literalPatterns(node).forEach((p) => regexProblem(p, issues));
      break;
    case 'Is':
      return visitTest(node, issues);
    default:
  }
  for (const child of childNodes(node)) visit(child, issues);
}

/** `x is name` / `x is name(args)`: the name is a test, not a function. */
function visitTest(node: Node, issues: Set<string>): void {
  visit(node.left, issues);
  const right = node.right as Node;
  const name = right.typename === 'Symbol' ? right.value : right.typename === 'FunCall' ? right.name.value : undefined;
  if (typeof name === 'string' && !BUILTIN_TESTS.has(name) && !REGISTRY.tests.has(name)) issues.add(`unknown test \`${name}\``);
  if (right.typename === 'FunCall') for (const arg of childNodes(right.args)) visit(arg, issues);
}

function regexProblem(pattern: string, issues: Set<string>): void {
  const issue = regexIssue(pattern);
  if (issue) issues.add(`invalid regular expression \`${pattern}\`: ${issue}`);
}

const isLiteral = (n: Node | undefined, value?: unknown): boolean =>
  n?.typename === 'Literal' && (value === undefined || n.value === value);

/** The literal patterns of `replace(..., regexp=true)` (positional or named flag; one target or a map of them). */
function literalPatterns(filter: Node): string[] {
  const [, ...rest] = filter.args.children as Node[];
  const positional = rest.filter((n) => n.typename !== 'KeywordArgs');
  const named = new Map<string, Node>();
  for (const kw of rest.filter((n) => n.typename === 'KeywordArgs')) {
    for (const pair of kw.children as Node[]) named.set(String(pair.key.value), pair.value);
  }
  const target = positional[0] ?? named.get('target');
  const flagAt = target?.typename === 'Dict' ? 1 : 2;
  const flag = positional.length > flagAt ? positional[flagAt] : named.get('regexp');
  if (!isLiteral(flag, true) || !target) return [];
  if (isLiteral(target)) return typeof target.value === 'string' ? [target.value] : [];
  if (target.typename !== 'Dict') return [];
  return (target.children as Node[])
    .filter((pair) => pair.key.typename === 'Symbol' || (isLiteral(pair.key) && typeof pair.key.value === 'string'))
    .map((pair) => String(pair.key.value));
}
