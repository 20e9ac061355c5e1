// The flow editor's logic without a browser: where the cursor is in YAML being typed (yaml-context.ts), what the flow
// schema served by the real API offers there (flow-schema.ts), where the server's error paths are in the source
// (flow-errors.ts), the side-by-side rows of a revision diff (side-by-side.ts), and the Execute and Resume forms'
// values (input-values.ts): defaults, the required check, the multipart body and where the server's errors are shown.
import { describe, expect, it } from 'vitest';
import { editorSchema } from '../../operator/model/plugin-catalog.js';
import type { JsonSchema } from '../../ui/src/api.js';
import { locatePath, parseConstraints, placeProblems, yamlSyntaxProblems } from '../../ui/src/components/flow-editor/flow-errors.js';
import { schemaCompletions } from '../../ui/src/components/flow-editor/flow-schema.js';
import { ITEM, yamlContextAt } from '../../ui/src/components/flow-editor/yaml-context.js';
import { checkValues, initialValues, placeServerErrors, toFormData } from '../../ui/src/components/input-values.js';
import { sideBySide } from '../../ui/src/components/side-by-side.js';

const schema = editorSchema('flow') as unknown as JsonSchema;
const LOG = 'io.kestra.plugin.core.log.Log';

/** The context and the completions (filtered by what is typed) at the `|` of `text`. */
function at(text: string) {
  const pos = text.indexOf('|');
  const ctx = yamlContextAt(text.replace('|', ''), pos);
  const labels = schemaCompletions(schema, ctx).map((c) => c.label).filter((l) => l.toLowerCase().startsWith(ctx.prefix.toLowerCase()));
  return { ctx, labels };
}

describe('flow editor completions', () => {
  it.each([
    ['a top-level key', 'id: a\nnamespace: b\nta|', [], 'key', ['tasks']],
    ['a property of a task of a known type', `id: a\ntasks:\n  - id: t\n    type: ${LOG}\n    lev|`, ['tasks', ITEM], 'key', ['level']],
    ['a task type', 'id: a\ntasks:\n  - id: t\n    type: io.kestra.plugin.core.debug.Ret|', ['tasks', ITEM], 'value', ['io.kestra.plugin.core.debug.Return']],
    ['an enum value', `tasks:\n  - id: t\n    type: ${LOG}\n    level: WA|`, ['tasks', ITEM], 'value', ['WARN']],
    ['a task nested in a flowable (Kestra indentation)', `tasks:\n- id: t\n  type: io.kestra.plugin.core.flow.If\n  then:\n  - id: u\n    type: ${LOG}\n    mess|\n  else: []`, ['tasks', ITEM, 'then', ITEM], 'key', ['message']],
    ['an input type', 'inputs:\n  - id: x\n    type: MULTI|', ['inputs', ITEM], 'value', ['MULTISELECT']],
    ['a trigger type (no enum: from the schema branches)', 'triggers:\n  - id: x\n    type: io.kestra.plugin.core.trigger.Sch|', ['triggers', ITEM], 'value', ['io.kestra.plugin.core.trigger.Schedule']],
    ['the first key of a new list item', 'tasks:\n  - ty|\n    id: x', ['tasks', ITEM], 'item', ['type']],
    ['a boolean', `tasks:\n  - id: t\n    type: ${LOG}\n    allowFailure: t|`, ['tasks', ITEM], 'value', ['true']],
  ])('%s', (_name, text, path, kind, expected) => {
    const { ctx, labels } = at(text);
    expect(ctx.path).toEqual(path);
    expect(ctx.kind).toBe(kind);
    for (const e of expected) expect(labels).toContain(e);
  });

  it('leaves out keys already written, above and below, and knows the task type from a sibling below', () => {
    const { ctx, labels } = at(`tasks:\n  - id: t\n    |\n    type: ${LOG}\n    message: hi`);
    expect(ctx.siblings).toMatchObject({ id: 't', type: LOG, message: 'hi' });
    expect(labels).toContain('level');
    expect(labels).not.toContain('message');
    expect(labels).not.toContain('id');
    // Properties of another task type are not offered for a Log task.
    expect(labels).not.toContain('format');
  });
});

describe('flow editor problems', () => {
  const src = `id: a\nnamespace: ns.x\ntasks:\n  - id: t\n    type: ${LOG}\n    mesage: hi\n  - id: u\n    type: io.kestra.plugin.core.log.Nope\ninputs:\n  - id: x\n    type: WAT\n`;

  it('splits the validate route\'s constraints and places each at its line', () => {
    const errors = parseConstraints('inputs[0].type: `WAT` is not one of STRING\ntasks[0].message: required property `message` is missing\ntasks[0].mesage: unknown property\ntasks[1].type: Unknown task type');
    expect(errors.map((e) => e.path)).toEqual(['inputs[0].type', 'tasks[0].message', 'tasks[0].mesage', 'tasks[1].type']);
    expect(placeProblems(src, errors).map((p) => p.line)).toEqual([11, 4, 6, 8]);
    const mesage = locatePath(src, 'tasks[0].mesage');
    expect(src.slice(mesage.from, mesage.to)).toBe('mesage: hi');
  });

  it('keeps a malformed-YAML message whole', () => {
    const errors = parseConstraints('body: Malformed YAML: Flow sequence at line 4, column 1:\n\ntasks: [\n\n^\n');
    expect(errors).toHaveLength(1);
    expect(errors[0]!.message).toContain('tasks: [');
  });

  it('finds YAML syntax errors in the browser, at their line', () => {
    expect(yamlSyntaxProblems(src)).toEqual([]);
    const problems = yamlSyntaxProblems('id: a\nnamespace: b\ntasks:\n  - id: t\n   bad: [\n');
    expect(problems.length).toBeGreaterThan(0);
    expect(problems[0]!.line).toBeGreaterThanOrEqual(4);
  });
});

describe('side-by-side diff rows', () => {
  it('pairs replaced lines and numbers both sides', () => {
    const rows = sideBySide('a\nb\nc\n', 'a\nB\nc\nd\n');
    expect(rows).toEqual([
      { kind: 'same', left: { line: 1, text: 'a' }, right: { line: 1, text: 'a' } },
      { kind: 'changed', left: { line: 2, text: 'b' }, right: { line: 2, text: 'B' } },
      { kind: 'same', left: { line: 3, text: 'c' }, right: { line: 3, text: 'c' } },
      { kind: 'added', right: { line: 4, text: 'd' } },
    ]);
    expect(sideBySide('x\ny\n', 'y\n')).toEqual([
      { kind: 'removed', left: { line: 1, text: 'x' } },
      { kind: 'same', left: { line: 2, text: 'y' }, right: { line: 1, text: 'y' } },
    ]);
  });
});

describe('Execute and Resume form values', () => {
  const inputs = [
    { id: 's', type: 'STRING' }, { id: 'n', type: 'INT', defaults: 3 }, { id: 'b', type: 'BOOLEAN' },
    { id: 'm', type: 'MULTISELECT', values: ['x', 'y'], defaults: ['y'] }, { id: 'j', type: 'JSON', required: false },
    { id: 'o', type: 'STRING', required: false }, { id: 'f', type: 'FILE' },
  ];

  it('starts from the defaults and enforces required inputs without one', () => {
    const values = initialValues(inputs);
    expect(values).toEqual({ s: '', n: '3', b: false, m: ['y'], j: '', o: '', f: undefined });
    expect(checkValues(inputs, values)).toEqual({ s: 'This input is required', f: 'This input is required' });
    expect(checkValues(inputs, { ...values, s: 'v', f: new File(['x'], 'x.txt'), j: '{bad' })).toEqual({ j: expect.stringMatching(/^Not valid JSON/) });
  });

  it('sends given values as multipart parts, files as file parts, lists as JSON, empty optional ones not at all', async () => {
    const fd = toFormData(inputs, { s: 'v', n: '7', b: true, m: ['x', 'y'], j: '{"a":1}', o: '', f: new File(['hello'], 'h.txt') });
    expect([...fd.keys()]).toEqual(['s', 'n', 'b', 'm', 'j', 'f']);
    expect(fd.get('m')).toBe('["x","y"]');
    expect(fd.get('b')).toBe('true');
    const file = fd.get('f') as File;
    expect(file.name).toBe('h.txt');
    expect(await file.text()).toBe('hello');
  });

  it("places the server's inputs.<id> errors at their fields and keeps the rest for the banner", () => {
    const placed = placeServerErrors(inputs, [
      { path: 'inputs.s', message: 'must match ^[a-z]+$' },
      { path: 'inputs.s', message: 'a second message for s' },
      { path: 'inputs.unknown', message: 'not declared' },
      { path: 'namespace', message: 'not allowed' },
    ]);
    expect(placed.atFields).toEqual({ s: 'must match ^[a-z]+$' });
    expect(placed.rest.map((e) => e.path)).toEqual(['inputs.s', 'inputs.unknown', 'namespace']);
  });

  it('starts a YAML input from its default as text', () => {
    expect(initialValues([{ id: 'y', type: 'YAML', defaults: { a: 1 } }])).toEqual({ y: '{\n  "a": 1\n}' });
  });
});
