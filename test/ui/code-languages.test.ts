// The code editor's languages without a browser: a namespace file's extension picks its highlighting
// (ui/src/components/code-languages.ts), and each lazily loaded grammar loads and names its language as CodeMirror does.
import { language } from '@codemirror/language';
import { EditorState } from '@codemirror/state';
import { describe, expect, it } from 'vitest';
import { languageOfPath, loadLanguage, type CodeLanguage } from '../../ui/src/components/code-languages.js';

describe('languageOfPath', () => {
  it.each<[string, CodeLanguage]>([
    ['/flows/etl.yaml', 'yaml'], ['/a.YML', 'yaml'], ['/data/x.json', 'json'], ['/scripts/main.py', 'python'],
    ['/web/app.js', 'javascript'], ['/web/app.mjs', 'javascript'], ['/web/app.tsx', 'typescript'], ['/q/report.sql', 'sql'],
    ['/notes/README.md', 'markdown'], ['/notes/plain.txt', 'text'], ['/Makefile', 'text'], ['/.env', 'text'],
    ['/dir.py/file', 'text'], ['/archive.tar.gz', 'text'],
  ])('%s is %s', (path, expected) => {
    expect(languageOfPath(path)).toBe(expected);
  });
});

describe('loadLanguage', () => {
  it.each(['json', 'python', 'javascript', 'typescript', 'sql', 'markdown'] as const)('loads %s', async (lang) => {
    const state = EditorState.create({ doc: '', extensions: [await loadLanguage(lang)] });
    // TypeScript is the JavaScript grammar in its TypeScript dialect.
    expect(state.facet(language)?.name).toBe(lang === 'typescript' ? 'typescript' : lang);
  });
});
