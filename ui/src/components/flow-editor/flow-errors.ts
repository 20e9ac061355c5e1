// The flow editor's problems at their lines: YAML syntax errors found in the browser, and the server's validation
// errors (`constraints` of POST /flows/validate, or the `errors` of a refused save) placed where their path
// (`tasks[0].message`) is in the source. Pure: the `yaml` parser only, no editor.
import { isMap, isScalar, isSeq, parseAllDocuments, parseDocument, type Node as YamlNode } from 'yaml';

export interface FlowProblem {
  /** The field the server named (`tasks[0].type`), or `yaml` for a syntax error. */
  path: string;
  message: string;
  /** Offsets in the source of what to mark, and its 1-based line. */
  from: number;
  to: number;
  line: number;
}

/** `constraints` text (`path: message` lines; a line that starts with no path continues the message above). */
export function parseConstraints(text: string): { path: string; message: string }[] {
  const out: { path: string; message: string }[] = [];
  for (const line of text.split('\n')) {
    const m = /^([A-Za-z_$][\w$-]*(?:\[\d+\]|\.[\w$-]+)*): (.*)$/.exec(line);
    // A malformed-YAML message carries the offending lines: keep it whole.
    if (m && !(out.length && /^body$/.test(out[out.length - 1]!.path))) out.push({ path: m[1]!, message: m[2]! });
    else if (out.length) out[out.length - 1]!.message += `\n${line}`;
    else out.push({ path: '', message: line });
  }
  return out.map((e) => ({ ...e, message: e.message.trimEnd() }));
}

/** `tasks[0].message` as segments: `['tasks', 0, 'message']`. */
export function pathSegments(path: string): (string | number)[] {
  const segs: (string | number)[] = [];
  for (const m of path.matchAll(/([^.[\]]+)|\[(\d+)\]/g)) segs.push(m[2] !== undefined ? Number(m[2]) : m[1]!);
  return segs;
}

const lineOf = (source: string, offset: number): number => source.slice(0, offset).split('\n').length;
const lineEnd = (source: string, offset: number): number => {
  const i = source.indexOf('\n', offset);
  return i < 0 ? source.length : i;
};

/**
 * Where `path` is in `source`: the key of its last segment when it exists, else the nearest mapping or list item
 * that does (a missing required property is marked on its task), else the first line.
 */
export function locatePath(source: string, path: string): { from: number; to: number; line: number } {
  const doc = parseDocument(source, { keepSourceTokens: false });
  let node: unknown = doc.contents;
  let at: [number, number] | undefined = (node as YamlNode | null)?.range ? [(node as YamlNode).range![0], (node as YamlNode).range![1]] : undefined;
  for (const seg of pathSegments(path)) {
    if (isMap(node)) {
      const pair = node.items.find((p) => (isScalar(p.key) ? String(p.key.value) : String(p.key)) === String(seg));
      if (!pair) break;
      const key = pair.key as YamlNode;
      if (key?.range) at = [key.range[0], key.range[1]];
      node = pair.value;
    } else if (isSeq(node) && typeof seg === 'number') {
      const item = node.items[seg] as YamlNode | undefined;
      if (!item?.range) break;
      at = [item.range[0], item.range[1]];
      node = item;
    } else {
      break;
    }
  }
  const from = at ? at[0] : 0;
  return { from, to: Math.max(from, lineEnd(source, from)), line: lineOf(source, from) };
}

/** The problems a validation answer names, each placed in `source`. */
export function placeProblems(source: string, errors: { path: string; message: string }[]): FlowProblem[] {
  return errors.map((e) => {
    const where = e.path && e.path !== 'body' ? locatePath(source, e.path) : { from: 0, to: lineEnd(source, 0), line: 1 };
    return { path: e.path, message: e.message, ...where };
  });
}

/** YAML syntax errors of `source`, at their positions (none when it parses). */
export function yamlSyntaxProblems(source: string): FlowProblem[] {
  const out: FlowProblem[] = [];
  for (const doc of parseAllDocuments(source)) {
    const errors = 'errors' in doc ? doc.errors : [];
    for (const err of errors) {
      const from = Math.min(err.pos[0], source.length);
      const to = Math.min(Math.max(err.pos[1], from), source.length);
      out.push({ path: 'yaml', message: err.message.split('\n')[0]!, from, to: to === from ? lineEnd(source, from) : to, line: lineOf(source, from) });
    }
  }
  return out;
}
