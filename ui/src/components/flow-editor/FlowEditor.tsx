// The YAML flow editor (the flow page's Edit tab and /ui/flows/new): CodeEditor with completions from the engine's
// flow schema (GET /plugins/schemas/flow), YAML syntax errors at once, and the server's validation
// (POST /flows/validate, debounced while typing) shown at their lines and listed under the editor. Pages read the
// problems through `onProblems` and may add problems of their own (a refused save) through `extra`.
import { autocompletion, type Completion, type CompletionContext, type CompletionResult } from '@codemirror/autocomplete';
import { useEffect, useMemo, useRef, useState } from 'react';
import { api, type JsonSchema } from '../../api';
import { CodeEditor, type Diagnostic } from '../CodeEditor';
import { placeProblems, parseConstraints, yamlSyntaxProblems, type FlowProblem } from './flow-errors';
import { schemaCompletions } from './flow-schema';
import { yamlContextAt } from './yaml-context';

/** Delay after the last keystroke before the server validates the text. */
export const VALIDATE_DEBOUNCE_MS = 400;

let schemaPromise: Promise<JsonSchema> | undefined;
/** The flow schema, fetched once per page load (the server lets the browser cache it too). */
function flowSchema(): Promise<JsonSchema> {
  schemaPromise ??= api.schema('flow').catch((err) => { schemaPromise = undefined; throw err; });
  return schemaPromise;
}

/** Completions from the flow schema at the cursor (waiting for the schema on the first use). */
async function completeFromSchema(cx: CompletionContext): Promise<CompletionResult | null> {
  const ctx = yamlContextAt(cx.state.doc.toString(), cx.pos);
  if (!cx.explicit && ctx.prefix === '') return null;
  let schema: JsonSchema;
  try { schema = await flowSchema(); } catch { return null; } // the failure is shown under the editor
  const options: Completion[] = schemaCompletions(schema, ctx).map((o) => ({
    label: o.label, apply: o.apply, detail: o.detail, info: o.info, type: o.kind === 'property' ? 'property' : 'enum',
    boost: o.required ? 1 : 0,
  }));
  return options.length ? { from: ctx.from, options, validFor: /^[\w.$-]*$/ } : null;
}

export interface EditorProblems { problems: FlowProblem[]; validating: boolean }

export function FlowEditor({ value, onChange, extra = [], onProblems, label = 'Flow source' }: {
  value: string;
  onChange(text: string): void;
  /** Problems found elsewhere (a refused save), shown with the editor's own. */
  extra?: FlowProblem[];
  onProblems?(p: EditorProblems): void;
  label?: string;
}) {
  const [schemaError, setSchemaError] = useState<unknown>();
  useEffect(() => { flowSchema().catch(setSchemaError); }, []);
  const extensions = useMemo(() => [autocompletion({ override: [completeFromSchema], activateOnTyping: true })], []);

  const syntax = useMemo(() => yamlSyntaxProblems(value), [value]);
  const [server, setServer] = useState<{ source: string; problems: FlowProblem[]; warnings: FlowProblem[] }>();
  const [validateError, setValidateError] = useState<unknown>();
  const validating = syntax.length === 0 && value.trim() !== '' && server?.source !== value;
  useEffect(() => {
    if (syntax.length > 0 || value.trim() === '') return undefined;
    const ctrl = new AbortController();
    const timer = setTimeout(() => {
      api.validateFlow(value, ctrl.signal).then((answers) => {
        const problems: FlowProblem[] = [];
        const warnings: FlowProblem[] = [];
        for (const a of answers) {
          if (a.constraints) problems.push(...placeProblems(value, parseConstraints(a.constraints)));
          for (const w of a.warnings ?? []) warnings.push(...placeProblems(value, [{ path: '', message: w }]));
          for (const p of a.deprecationPaths ?? []) warnings.push(...placeProblems(value, [{ path: p, message: 'deprecated' }]));
        }
        setValidateError(undefined);
        setServer({ source: value, problems, warnings });
      }, (err) => { if (!ctrl.signal.aborted) setValidateError(err); });
    }, VALIDATE_DEBOUNCE_MS);
    return () => { clearTimeout(timer); ctrl.abort(); };
  }, [value, syntax.length]);

  const problems = useMemo(() => {
    const fromServer = server?.source === value ? server.problems : [];
    const seen = new Set<string>();
    return [...syntax, ...fromServer, ...extra].filter((p) => {
      const k = `${p.line}\u0000${p.path}\u0000${p.message}`;
      return seen.has(k) ? false : (seen.add(k), true);
    });
  }, [syntax, server, value, extra]);
  const warnings = server?.source === value ? server.warnings : [];

  const notify = useRef(onProblems);
  notify.current = onProblems;
  useEffect(() => { notify.current?.({ problems, validating }); }, [problems, validating]);

  const diagnostics: Diagnostic[] = useMemo(() => [
    ...problems.map((p) => ({ from: p.from, to: p.to, severity: 'error' as const, message: p.path && p.path !== 'yaml' ? `${p.path}: ${p.message}` : p.message })),
    ...warnings.map((p) => ({ from: p.from, to: p.to, severity: 'warning' as const, message: p.path ? `${p.path}: ${p.message}` : p.message })),
  ], [problems, warnings]);

  return (
    <div className="flow-editor">
      <CodeEditor value={value} onChange={onChange} label={label} extensions={extensions} diagnostics={diagnostics} />
      <section className="problems" aria-label="Problems">
        {schemaError ? <p className="muted">Completions are unavailable: {schemaError instanceof Error ? schemaError.message : String(schemaError)}</p> : null}
        {validateError ? <p className="muted">Validation is unavailable: {validateError instanceof Error ? validateError.message : String(validateError)}</p> : null}
        {problems.length === 0 && warnings.length === 0 && (
          <p className="muted" role="status">{validating ? 'Validating…' : 'No problems'}</p>
        )}
        {(problems.length > 0 || warnings.length > 0) && (
          <ul>
            {problems.map((p, i) => (
              <li key={`e${i}`} className="problem problem-error">
                <span className="problem-line">Line {p.line}</span> {p.path && p.path !== 'yaml' ? <code>{p.path}</code> : null} {p.message}
              </li>
            ))}
            {warnings.map((p, i) => (
              <li key={`w${i}`} className="problem problem-warning">
                <span className="problem-line">Line {p.line}</span> warning: {p.path ? <code>{p.path}</code> : null} {p.message}
              </li>
            ))}
          </ul>
        )}
      </section>
    </div>
  );
}
