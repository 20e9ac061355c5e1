// Where the cursor is in a YAML flow being typed, from indentation alone (the text is often not valid YAML while
// typing): the path of keys and list items above it, whether a key or a value is being typed, and the sibling keys
// already present, for the editor's schema completions (flow-schema.ts). Pure: no DOM, no editor.

/** A path segment: a mapping key, or `[]` for "an item of a list". */
export type PathSegment = string;
export const ITEM = '[]';

export interface YamlContext {
  /** Keys and items from the document root to the mapping (or list) that holds what is typed. */
  path: PathSegment[];
  /** `key`: typing a mapping key; `value`: typing the value of `key`; `item`: typing a list item's scalar or first key. */
  kind: 'key' | 'value' | 'item';
  /** The key whose value is typed (kind `value`). */
  key?: string;
  /** What was typed so far of the word being completed, and where it starts (offset in the document). */
  prefix: string;
  from: number;
  /** The keys of the same mapping already written (above and below), with their scalar values. */
  siblings: Record<string, string>;
}

interface Line {
  /** Column of the first non-space character. */
  indent: number;
  /** The line starts a list item (`- `). */
  dash: boolean;
  /** Column where the key (or scalar) starts: after the dashes. */
  keyCol: number;
  /** Column of the innermost dash (`- - x`: the second), when `dash`. */
  dashCol: number;
  key?: string;
  value?: string;
  blank: boolean;
}

const KEY = /^([A-Za-z0-9_$.@/-][^:#]*?|"[^"]*"|'[^']*'):(?:\s+(.*))?$/;

function parseLine(text: string): Line {
  const indent = text.length - text.trimStart().length;
  let rest = text.slice(indent);
  const blank = rest === '' || rest.startsWith('#');
  let keyCol = indent;
  let dash = false;
  let dashCol = indent;
  while (/^-(\s|$)/.test(rest)) {
    dash = true;
    dashCol = keyCol;
    const after = rest.slice(1);
    const spaces = after.length - after.trimStart().length;
    keyCol += 1 + spaces;
    rest = after.trimStart();
  }
  const m = KEY.exec(rest.replace(/\s+#.*$/, '').trimEnd());
  if (!m) return { indent, dash, keyCol, dashCol, blank };
  const key = m[1]!.replace(/^["']|["']$/g, '');
  return { indent, dash, keyCol, dashCol, key, value: (m[2] ?? '').replace(/^["']|["']$/g, ''), blank };
}

/**
 * The path of the mapping whose entries sit at column `col`, found by walking up from line `from` (exclusive), and the
 * sibling keys seen on the way. `itemDash` is the dash column when the mapping is known to be a list item.
 */
function containerPath(lines: Line[], from: number, col: number, itemDash: number | undefined, siblings?: Record<string, string>): PathSegment[] {
  let dashCol = itemDash;
  for (let i = from - 1; i >= 0; i--) {
    const l = lines[i]!;
    if (l.blank) continue;
    if (dashCol === undefined) {
      if (l.keyCol > col) continue; // deeper content of a sibling
      if (l.keyCol === col) {
        if (l.key !== undefined && siblings) siblings[l.key] = l.value ?? '';
        if (l.dash) dashCol = l.dashCol; // this mapping is a list item
        continue;
      }
      // A line left of the mapping: its key owns the mapping.
      return l.key === undefined ? [] : [...containerPath(lines, i, l.keyCol, l.dash ? l.dashCol : undefined), l.key];
    }
    // Inside a list whose dashes are at dashCol: skip its other items and their content; the owner is left of or at it.
    if (l.indent > dashCol || (l.dash && l.indent === dashCol)) continue;
    if (l.key === undefined) return [ITEM];
    return [...containerPath(lines, i, l.keyCol, l.dash ? l.dashCol : undefined), l.key, ITEM];
  }
  return dashCol === undefined ? [] : [ITEM];
}

/** The context at `pos` (an offset) in `doc`. */
export function yamlContextAt(doc: string, pos: number): YamlContext {
  const lineStart = doc.lastIndexOf('\n', pos - 1) + 1;
  const before = doc.slice(lineStart, pos);
  const allLines = doc.split('\n');
  const lineNo = doc.slice(0, lineStart).split('\n').length - 1;
  const lines = allLines.map(parseLine);

  const siblings: Record<string, string> = {};
  const valueMatch = /^(\s*(?:-\s+)*)([^\s:#][^:#]*?):\s+([^\s#]*)$/.exec(before) ?? /^(\s*(?:-\s+)*)([^\s:#][^:#]*?):()$/.exec(before);
  const head = /^(\s*)((?:-\s+)*)([^\s:#]*)$/.exec(before);
  const wordStart = (w: string) => pos - w.length;

  let col: number;
  let dashed: boolean;
  let dashAt = 0;
  let kind: YamlContext['kind'];
  let key: string | undefined;
  let prefix: string;
  if (valueMatch) {
    col = valueMatch[1]!.length;
    dashed = /-/.test(valueMatch[1]!);
    dashAt = valueMatch[1]!.lastIndexOf('-');
    kind = 'value';
    key = valueMatch[2]!.trim();
    prefix = valueMatch[3]!;
  } else if (head) {
    col = head[1]!.length + head[2]!.length;
    dashed = head[2]!.length > 0;
    dashAt = head[1]!.length + head[2]!.lastIndexOf('-');
    kind = dashed ? 'item' : 'key';
    prefix = head[3]!;
  } else {
    return { path: [], kind: 'key', prefix: '', from: pos, siblings };
  }

  // Siblings below the cursor, in the same mapping (stop at a line left of it or at the next item's dash).
  for (let i = lineNo + 1; i < lines.length; i++) {
    const l = lines[i]!;
    if (l.blank || l.keyCol > col) continue;
    if (l.keyCol < col || l.dash) break;
    if (l.key !== undefined) siblings[l.key] = l.value ?? '';
  }
  const path = containerPath(lines, lineNo, col, dashed ? dashAt : undefined, siblings);
  return { path, kind, key, prefix, from: wordStart(prefix), siblings };
}
