// Two texts as side-by-side rows for a diff view (SideBySideDiff.tsx): the `diff` library's line diff, removed lines
// paired with the added lines that replace them, unchanged lines on both sides. Pure, for tests without a browser.
import { diffLines } from 'diff';

export interface DiffCell { line: number; text: string }
export interface DiffRow {
  kind: 'same' | 'changed' | 'removed' | 'added';
  left?: DiffCell;
  right?: DiffCell;
}

const linesOf = (value: string): string[] => {
  const lines = value.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
};

export function sideBySide(left: string, right: string): DiffRow[] {
  const rows: DiffRow[] = [];
  let l = 1;
  let r = 1;
  const parts = diffLines(left, right);
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i]!;
    if (!part.added && !part.removed) {
      for (const text of linesOf(part.value)) rows.push({ kind: 'same', left: { line: l++, text }, right: { line: r++, text } });
      continue;
    }
    if (part.removed) {
      const removed = linesOf(part.value);
      const next = parts[i + 1];
      const added = next?.added ? linesOf(next.value) : [];
      if (next?.added) i++;
      for (let k = 0; k < Math.max(removed.length, added.length); k++) {
        const a = removed[k];
        const b = added[k];
        rows.push({
          kind: a !== undefined && b !== undefined ? 'changed' : a !== undefined ? 'removed' : 'added',
          left: a !== undefined ? { line: l++, text: a } : undefined,
          right: b !== undefined ? { line: r++, text: b } : undefined,
        });
      }
      continue;
    }
    for (const text of linesOf(part.value)) rows.push({ kind: 'added', right: { line: r++, text } });
  }
  return rows;
}
