// The languages the CodeEditor highlights, chosen by a file's extension (namespace files): YAML is bundled with the
// editor (flows are YAML); the others are loaded when first needed (their own chunks), so pages that never open a
// Python or SQL file do not download their grammars. Anything else is plain text.
import type { Extension } from '@codemirror/state';

export type CodeLanguage = 'yaml' | 'json' | 'python' | 'javascript' | 'typescript' | 'sql' | 'markdown' | 'text';

const BY_EXTENSION: Record<string, CodeLanguage> = {
  yaml: 'yaml', yml: 'yaml', json: 'json', py: 'python', js: 'javascript', mjs: 'javascript', cjs: 'javascript',
  jsx: 'javascript', ts: 'typescript', tsx: 'typescript', sql: 'sql', md: 'markdown', markdown: 'markdown',
};

/** The language of a file from its name's extension (case-insensitive); `text` when none applies. */
export function languageOfPath(path: string): CodeLanguage {
  const name = path.slice(path.lastIndexOf('/') + 1);
  const dot = name.lastIndexOf('.');
  return dot > 0 ? BY_EXTENSION[name.slice(dot + 1).toLowerCase()] ?? 'text' : 'text';
}

/** The CodeMirror extension of a language other than YAML and plain text (loaded on demand). */
export async function loadLanguage(language: Exclude<CodeLanguage, 'yaml' | 'text'>): Promise<Extension> {
  switch (language) {
    case 'json': return (await import('@codemirror/lang-json')).json();
    case 'python': return (await import('@codemirror/lang-python')).python();
    case 'javascript': return (await import('@codemirror/lang-javascript')).javascript({ jsx: true });
    case 'typescript': return (await import('@codemirror/lang-javascript')).javascript({ typescript: true, jsx: true });
    case 'sql': return (await import('@codemirror/lang-sql')).sql();
    case 'markdown': return (await import('@codemirror/lang-markdown')).markdown();
  }
}
