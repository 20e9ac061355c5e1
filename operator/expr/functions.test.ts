// Tables for template functions with injected services (secrets, KV, file reads) and jq after init.
import { beforeAll, describe, expect, it } from 'vitest';
import { ExpressionError, createRenderer, initExpressions, type RenderServices } from './index.js';

const secrets: Record<string, string> = { API_KEY: 'k-123', DB_PASS: 'pw' };
const store: Record<string, unknown> = { 'company.team/color': 'blue', 'other.ns/size': 42, 'company.team/obj': { a: [1] } };
const files: Record<string, string> = { 'kestra:///company/team/file.txt': 'file content\n' };
const seenSecrets: string[] = [];

const servicesInMemory: RenderServices = {
  secret: (name) => secrets[name],
  kv: (namespace, key) => {
    const id = `${namespace}/${key}`;
    return id in store ? { found: true, value: store[id] } : { found: false };
  },
  read: (uri) => {
    if (!(uri in files)) throw new Error(`File not found: ${uri}`);
    return files[uri];
  },
  onSecret: (value) => seenSecrets.push(value),
};

const r = createRenderer(servicesInMemory);
const vars = {
  flow: { id: 'f', namespace: 'company.team' },
  taskrun: { value: 'b' },
  parents: [{ taskrun: { value: 'x' } }, { taskrun: { value: 'outer' } }],
  outputs: { t: { outer: { x: { b: { value: 'deep-b' }, c: { value: 'deep-c' } } } } },
  vars: { greeting: 'Hi {{ flow.id }}', nested: '{{ vars.greeting }}!', json: '{"a": [1, 2]}', yamlText: 'a: 1\nb: [x]' },
  inputs: { list: [4, 9, 2] },
};

beforeAll(async () => {
  await initExpressions();
});

describe('functions', () => {
  it.each([
    ['{{ secret("API_KEY") }}', 'k-123'],
    ["{{ kv('color') }}", 'blue'],
    ["{{ kv('size', 'other.ns') }}", '42'],
    ["{{ kv('obj').a }}", '[1]'],
    ["{{ kv('nope', 'company.team', false) ?? 'none' }}", 'none'],
    ["{{ kv('nope', errorOnMissing=false) ?? 'none' }}", 'none'],
    ["{{ read('kestra:///company/team/file.txt') | trim }}", 'file content'],
    ['{{ render(vars.greeting) }}', 'Hi f'],
    ['{{ render(vars.nested) }}', 'Hi f!'],
    ['{{ renderOnce(vars.nested) }}', 'Hi {{ flow.id }}!'],
    ['{{ render(42) }}', '42'],
    ['{{ currentEachOutput(outputs.t).value }}', 'deep-b'],
    ['{{ json(vars.json).a[1] }}', '2'],
    ['{{ fromJson(vars.json).a | length }}', '2'],
    ['{{ toJson({"k": [true, null]}) }}', '{"k":[true,null]}'],
    ['{{ yaml(vars.yamlText).b[0] }}', 'x'],
    ['{{ range(1, 4) }}', '[1,2,3,4]'],
    ['{{ range(0, 10, 5) }}', '[0,5,10]'],
    ['{% for i in range(1, 3) %}{{ i }}{% endfor %}', '123'],
    ['{{ max(3, 7, 5) }} {{ min(inputs.list) }}', '7 2'],
    ['{{ uuid() | length }}', '36'],
    ['{{ fromJson(printContext()).flow.id }}', 'f'],
    ['{{ inputs.list | jq(".[] | select(. > 3)") }}', '[4,9]'],
    ['{{ {"a": "x"} | jq(".a") | first }}', 'x'],
    ['{{ inputs.list | jq("length") | first }}', '3'],
  ])('%s', (template, expected) => {
    expect(r.render(template, vars)).toBe(expected);
  });

  it.each([
    ['{{ secret("MISSING") }}', 'Secret `MISSING` not found'],
    ["{{ kv('nope') }}", 'KV key `nope` not found in namespace `company.team`'],
    ["{{ read('kestra:///nope') }}", 'File not found'],
    ['{{ currentEachOutput(outputs.t.outer) }}', 'currentEachOutput'],
    ['{{ json("{bad") }}', 'invalid JSON'],
    ['{{ inputs.list | jq(".[") }}', 'jq'],
  ])('%s fails', (template, message) => {
    expect(() => r.render(template, vars)).toThrow(ExpressionError);
    expect(() => r.render(template, vars)).toThrow(message);
  });

  it('a json() error does not quote the text (a secret prefix no masker could find)', () => {
    const err = (() => { try { r.render('{{ json(pw) }}', { ...vars, pw: 'a-very-long-secret-value-1234' }); } catch (e) { return e as Error; } })();
    expect(err?.message).toContain('invalid JSON');
    expect(err?.message).not.toContain('a-very-lon');
  });

  it('reports every secret value read, so callers can mask it', () => {
    r.render('{{ secret("DB_PASS") }}', vars);
    expect(seenSecrets).toContain('pw');
  });

  it('functions needing a service fail clearly without one', () => {
    const bare = createRenderer();
    expect(() => bare.render('{{ secret("API_KEY") }}', vars)).toThrow('secret() is not available');
  });

  it('renderTyped returns native values from functions', () => {
    expect(r.renderTyped('{{ kv("obj") }}', vars)).toEqual({ a: [1] });
    expect(r.renderTyped('{{ range(1, 3) }}', vars)).toEqual([1, 2, 3]);
  });
});
