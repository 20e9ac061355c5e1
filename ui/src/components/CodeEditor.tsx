// A code editor (CodeMirror 6: line numbers, syntax highlighting, search with Ctrl-F, undo, folding) for any text a
// page edits: YAML by default, or another language (code-languages.ts: JSON, Python, JavaScript/TypeScript, SQL,
// Markdown, plain text; `languageOfPath` picks one from a file name), switched in place when it changes. The text is
// the page's state (`value`/`onChange`); problems are shown inline and in the gutter (`diagnostics`); pages add
// behaviour through `extensions` (the flow editor adds its schema completions).
// The editor lives in a shadow root: there CodeMirror installs its styles as a constructed style sheet, which the
// server's Content-Security-Policy (`style-src 'self'`, no inline <style>) allows; in the document it would not.
import { yaml } from '@codemirror/lang-yaml';
import { lintGutter, setDiagnostics, type Diagnostic } from '@codemirror/lint';
import { Compartment, EditorState, type Extension } from '@codemirror/state';
import { EditorView, basicSetup } from 'codemirror';
import { useEffect, useRef } from 'react';
import { loadLanguage, type CodeLanguage } from './code-languages';

export type { Diagnostic };

/** The editor's look (the page's stylesheet does not reach into the shadow root). */
const editorTheme = (height: string) => ({
  '&': { height, fontSize: '13px', backgroundColor: '#fff' },
  '&.cm-focused': { outline: '2px solid #efeafe' },
  '.cm-scroller': { overflow: 'auto', fontFamily: 'ui-monospace, SFMono-Regular, Menlo, Consolas, monospace' },
  '.cm-content': { tabSize: '2' },
  '.cm-gutters': { backgroundColor: '#fafbfc', borderRight: '1px solid #dde1e6', color: '#6a737d' },
});

export function CodeEditor({ value, onChange, label, language = 'yaml', extensions = [], diagnostics = [], readOnly = false, height = '60vh' }: {
  value: string;
  onChange?(text: string): void;
  /** The accessible name of the text area (tests and screen readers find it by this). */
  label: string;
  language?: CodeLanguage;
  extensions?: Extension[];
  diagnostics?: Diagnostic[];
  readOnly?: boolean;
  height?: string;
}) {
  const host = useRef<HTMLDivElement>(null);
  const view = useRef<EditorView>();
  const changed = useRef(onChange);
  changed.current = onChange;
  const languageSlot = useRef(new Compartment());
  /** The language the editor highlights now (made with YAML or none; others arrive once loaded). */
  const shown = useRef<CodeLanguage>(language === 'yaml' ? 'yaml' : 'text');

  useEffect(() => {
    const shadow = host.current!.shadowRoot ?? host.current!.attachShadow({ mode: 'open' });
    const parent = document.createElement('div');
    shadow.appendChild(parent);
    const v = new EditorView({
      root: shadow,
      parent,
      state: EditorState.create({
        doc: value,
        extensions: [
          basicSetup,
          lintGutter(),
          languageSlot.current.of(language === 'yaml' ? yaml() : []),
          EditorView.contentAttributes.of({ 'aria-label': label }),
          EditorState.readOnly.of(readOnly),
          EditorView.editable.of(!readOnly),
          EditorView.theme(editorTheme(height)),
          EditorView.updateListener.of((u) => { if (u.docChanged) changed.current?.(u.state.doc.toString()); }),
          ...extensions,
        ],
      }),
    });
    view.current = v;
    return () => { v.destroy(); parent.remove(); view.current = undefined; };
    // The editor is made once; later `value`s and `language`s are applied below, other settings are fixed for its life.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, []);

  useEffect(() => {
    const v = view.current;
    if (v && v.state.doc.toString() !== value) v.dispatch({ changes: { from: 0, to: v.state.doc.length, insert: value } });
  }, [value]);

  useEffect(() => {
    if (shown.current === language) return undefined;
    const set = (lang: CodeLanguage, ext: Extension) => {
      shown.current = lang;
      view.current?.dispatch({ effects: languageSlot.current.reconfigure(ext) });
    };
    if (language === 'yaml' || language === 'text') { set(language, language === 'yaml' ? yaml() : []); return undefined; }
    let current = true;
    // A grammar that fails to load leaves the text plain (still editable).
    loadLanguage(language).then((ext) => { if (current) set(language, ext); }, () => { if (current) set('text', []); });
    return () => { current = false; };
  }, [language]);

  useEffect(() => {
    const v = view.current;
    if (!v) return;
    const max = v.state.doc.length;
    const clamped = diagnostics.map((d) => ({ ...d, from: Math.min(d.from, max), to: Math.min(Math.max(d.to, d.from), max) }));
    v.dispatch(setDiagnostics(v.state, clamped));
  }, [diagnostics]);

  return <div className="code-editor" ref={host} />;
}
