// `flow validate` offline: reads flow files and folders (plain flow YAML, multi-document files, or Kubernetes Flow
// manifests), checks each flow with the API's own validator (validateOne: the messages of POST /flows/validate) and
// places every error on its file and line.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { LineCounter, parseDocument, stringify } from 'yaml';
import { splitDocuments, validateOne } from '../api/routes/flows.js';
import { initExpressions } from '../operator/expr/index.js';
import { CliError } from './errors.js';

export interface Problem { line?: number; path?: string; message: string }

export interface CheckedDocument {
  file: string;
  /** 1-based line of the document's first line in the file. */
  line: number;
  /** The flow's source as it is sent to a server (for a manifest: its spec as YAML). */
  source: string;
  id?: string;
  namespace?: string;
  /** A Kubernetes manifest of another kind than Flow: not a flow, not checked. */
  skipped?: string;
  errors: Problem[];
  warnings: Problem[];
}

const FLOW_API_GROUP = 'flowpilot.io/';
const isYaml = (name: string): boolean => /\.ya?ml$/i.test(name);

/** Every YAML file of `paths` (folders walked recursively, hidden folders and node_modules skipped, sorted; `-` is stdin). */
export function yamlFiles(paths: string[]): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      if (entry.name.startsWith('.') || entry.name === 'node_modules') continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.isFile() && isYaml(entry.name)) out.push(path);
    }
  };
  for (const p of paths) {
    if (p === '-') { out.push(p); continue; } // standard input (e.g. the output of kubectl kustomize)
    let st;
    try {
      st = statSync(p);
    } catch {
      throw new CliError(`'${p}' does not exist: give flow files or folders that hold them`);
    }
    if (st.isDirectory()) walk(p);
    else out.push(p);
  }
  return out;
}

/** `tasks[1].message` → ['tasks', 1, 'message']. */
function pathKeys(path: string): (string | number)[] {
  return [...path.matchAll(/\[(\d+)\]|([^.[\]]+)/g)].map((m) => (m[1] !== undefined ? Number(m[1]) : m[2]!));
}

type YamlDoc = ReturnType<typeof parseDocument>;

/** The 1-based line of the node at `keys` in `doc` (or of its nearest existing parent). */
function lineOf(doc: YamlDoc, counter: LineCounter, keys: (string | number)[]): number | undefined {
  for (let n = keys.length; n >= 0; n--) {
    const node = doc.getIn(keys.slice(0, n), true) as { range?: [number, number, number] } | undefined;
    const at = n === 0 ? (doc.contents as { range?: [number, number, number] } | null)?.range?.[0] : node?.range?.[0];
    if (at !== undefined) return counter.linePos(at).line;
  }
  return undefined;
}

/** The `path: message` lines of validateOne, each with its line in the document. */
function placed(text: string | undefined, doc: YamlDoc, counter: LineCounter, prefix: (string | number)[], offset: number): Problem[] {
  if (!text) return [];
  return text.split('\n').filter(Boolean).map((line) => {
    const m = /^([A-Za-z0-9_$[\].-]+): (.*)$/.exec(line);
    if (!m) return { message: line, line: offset + 1 };
    const at = lineOf(doc, counter, [...prefix, ...pathKeys(m[1]!)]);
    return { path: m[1]!, message: m[2]!, line: at === undefined ? undefined : offset + at };
  });
}

function checkDocument(file: string, piece: string, offset: number): CheckedDocument {
  const counter = new LineCounter();
  const doc = parseDocument(piece, { lineCounter: counter, uniqueKeys: true });
  const base: CheckedDocument = { file, line: offset + 1, source: piece, errors: [], warnings: [] };
  if (doc.errors.length > 0) {
    base.errors = doc.errors.map((e) => ({ line: offset + (e.linePos?.[0].line ?? 1), message: `malformed YAML: ${e.message.split('\n')[0]!.replace(/ at line \d+, column \d+:?$/, '')}` }));
    return base;
  }
  let raw: unknown;
  try {
    raw = doc.toJS({ maxAliasCount: 100 });
  } catch (err) {
    base.errors = [{ line: offset + 1, message: `malformed YAML: ${(err as Error).message}` }];
    return base;
  }
  const manifest = raw as { apiVersion?: unknown; kind?: unknown; spec?: unknown } | null;
  let prefix: (string | number)[] = [];
  if (manifest && typeof manifest.apiVersion === 'string' && typeof manifest.kind === 'string') {
    if (manifest.kind !== 'Flow' || !manifest.apiVersion.startsWith(FLOW_API_GROUP)) return { ...base, skipped: `${manifest.kind} (${manifest.apiVersion})` };
    prefix = ['spec'];
    base.source = stringify(manifest.spec ?? null, { lineWidth: 0 });
  }
  const result = validateOne(base.source, 0);
  base.id = result.flow;
  base.namespace = result.namespace;
  base.errors = placed(result.constraints, doc, counter, prefix, offset);
  base.warnings = [
    ...(result.deprecationPaths ?? []).map((p) => ({ path: p, message: 'deprecated', line: offsetLine(doc, counter, prefix, p, offset) })),
    ...placed(result.warnings?.join('\n'), doc, counter, prefix, offset),
  ];
  return base;
}

function offsetLine(doc: YamlDoc, counter: LineCounter, prefix: (string | number)[], path: string, offset: number): number | undefined {
  const at = lineOf(doc, counter, [...prefix, ...pathKeys(path)]);
  return at === undefined ? undefined : offset + at;
}

/** Every document of `file`, split as the API splits a multi-document body, checked. */
export function checkFile(file: string): CheckedDocument[] {
  const text = readFileSync(file === '-' ? 0 : file, 'utf8');
  const shown = file === '-' ? '<stdin>' : file;
  const out: CheckedDocument[] = [];
  let cursor = 0;
  for (const split of splitDocuments(text)) {
    const piece = split.replace(/^(\s*\n)+/, ''); // the blank lines after a `---`
    const start = text.indexOf(piece, cursor);
    cursor = start + piece.length;
    const offset = text.slice(0, start).split('\n').length - 1;
    out.push(checkDocument(shown, piece, offset));
  }
  return out;
}

/** Checks every flow of `paths`. */
export async function checkPaths(paths: string[]): Promise<CheckedDocument[]> {
  await initExpressions();
  return yamlFiles(paths).flatMap((f) => checkFile(f));
}

/** `file:line: [path: ]message` */
export const problemLine = (file: string, p: Problem, kind = 'error'): string =>
  `${file}:${p.line ?? 1}: ${kind}: ${p.path ? `${p.path}: ` : ''}${p.message}`;
