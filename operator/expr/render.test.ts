// Tables for the core language: variables, strict errors, `??`, ternary, operators, tags, renderTyped.
import { describe, expect, it } from 'vitest';
import { ExpressionError, createRenderer } from './index.js';

const vars = {
  execution: { id: 'exec1', startDate: '2024-01-15T10:30:00.000Z' },
  flow: { id: 'hello', namespace: 'company.team' },
  task: { id: 't1' },
  taskrun: { value: 'b', undef: undefined },
  inputs: { name: 'World', n: 3, nul: null, list: [1, 2, 3], flag: true, map: { a: 1, b: 'x' }, empty: '' },
  outputs: { t: { value: '["a","b"]', count: 2 }, task: { 'loop value': { attr: 'deep' } }, 'my-task': { uri: 'kestra:///x' } },
  vars: { greeting: 'Hi {{ inputs.name }}' },
  labels: { team: 'data' },
  workingDir: '/tmp/wd',
};
const r = createRenderer();

describe('rendering', () => {
  it.each([
    ['plain text', 'plain text'],
    ['{{ outputs.none.value ?? "x" }} {{ inputs.map.null ?? "n" }}', 'x n'],
    ['Hello {{ inputs.name }}!', 'Hello World!'],
    ['{{ inputs.n }}', '3'],
    ['{{ inputs.flag }}', 'true'],
    ['{{ inputs.nul }}', ''],
    ['{{ inputs.list }}', '[1,2,3]'],
    ['{{ inputs.map }}', '{"a":1,"b":"x"}'],
    ['{{ inputs.list[1] }}', '2'],
    ["{{ inputs['name'] }}", 'World'],
    ["{{ outputs.task['loop value'].attr }}", 'deep'],
    ["{{ outputs['my-task'].uri }}", 'kestra:///x'],
    ['{{ labels.team }}/{{ workingDir }}', 'data//tmp/wd'],
    ['{{ inputs.list | length }} {{ inputs.list.length }}', '3 3'],
    ['{{ inputs.missing ?? "dflt" }}', 'dflt'],
    ["{{ inputs.missing??'dflt' }}", 'dflt'],
    ['{{ inputs.nul ?? "was null" }}', 'was null'],
    ['{{ inputs.a ?? inputs.b ?? inputs.name }}', 'World'],
    ['{{ outputs.none.value ?? "x" }}', 'x'],
    ['{{ inputs.missing ?? inputs.nul ?? 7 }}', '7'],
    ['{{ inputs.nul ??? "only undefined" }}', ''],
    ['{{ inputs.missing ??? "u" }}', 'u'],
    ['{{ inputs.missing ?? "2024-01-15T00:00:00Z" | date("yyyy") }}', '2024'],
    ['{{ inputs.n > 2 ? "big" : "small" }}', 'big'],
    ['{{ inputs.n > 5 ? "big" : inputs.n > 2 ? "mid" : "small" }}', 'mid'],
    ['{{ inputs.flag ? inputs.name : "no" }}', 'World'],
    ['{{ "yes" if inputs.flag else "no" }}', 'yes'],
    ['{{ inputs.list contains 2 }}', 'true'],
    ['{{ inputs.list contains 9 }}', 'false'],
    ["{{ 'abc' contains 'b' }}", 'true'],
    ["{{ inputs.map contains 'a' }}", 'true'],
    ["{{ inputs.map contains 'z' }}", 'false'],
    ['{{ "a" ~ inputs.n ~ "b" }}', 'a3b'],
    ['{{ inputs.n + 2 }} {{ inputs.n - 1 }} {{ inputs.n * 2 }} {{ 7 / 2 }} {{ 7 // 2 }} {{ 7 % 4 }}', '5 2 6 3.5 3 3'],
    ['{{ inputs.n == 3 and not (inputs.n != 3) }}', 'true'],
    ['{{ inputs.n < 2 or inputs.flag }}', 'true'],
    ['{{ inputs.missing is defined }}', 'false'],
    ['{{ inputs.name is defined }}', 'true'],
    ['{{ inputs.missing is not defined }}', 'true'],
    ['{{ inputs.nul is null }}', 'true'],
    ['{{ inputs.missing is null }}', 'true'],
    ['{{ inputs.name is not null }}', 'true'],
    ['{{ inputs.empty is empty }} {{ inputs.list is empty }}', 'true false'],
    ['{{ inputs.n is odd }} {{ inputs.n is even }}', 'true false'],
    ['{{ inputs.map is map }} {{ inputs.list is iterable }} {{ outputs.t.value is json }}', 'true true true'],
    ['{{ inputs.missing | default("d") }}', 'd'],
    ['{{ inputs.empty | default("d") }}', 'd'],
    ['{{ inputs.name | default("d") }}', 'World'],
    ['{% if inputs.n > 2 %}big{% else %}small{% endif %}', 'big'],
    ['{% if inputs.n > 5 %}a{% elif inputs.n > 2 %}b{% else %}c{% endif %}', 'b'],
    ['{% for i in inputs.list %}{{ loop.index }}:{{ i }}{% if not loop.last %},{% endif %}{% endfor %}', '0:1,1:2,2:3'],
    ['{% for k, v in inputs.map %}{{ k }}={{ v }};{% endfor %}', 'a=1;b=x;'],
    ['{% for e in inputs.map %}{{ e.key }}={{ e.value }};{% endfor %}', 'a=1;b=x;'],
    ['{% for i in [] %}x{% else %}none{% endfor %}', 'none'],
    ['{% set x = inputs.n * 2 %}{{ x }}', '6'],
    ['{% set s %}block {{ inputs.name }}{% endset %}{{ s | upper }}', 'BLOCK WORLD'],
    ['{% raw %}{{ inputs.missing }}{% endraw %}', '{{ inputs.missing }}'],
    ['{# a comment #}x', 'x'],
    ['a {{- " b " -}} c', 'a b c'],
    ['{{ [1, 2] }} {{ {"k": "v"} }} {{ null }} {{ true }}', '[1,2] {"k":"v"}  true'],
    ['{{ "<b>&" }}', '<b>&'],
    ['{{ -inputs.n | abs }}', '3'],
    ['Is it {{ inputs.name }}? Yes?', 'Is it World? Yes?'],
    ['{{ 1..3 }} {{ -1..1 }} {{ (inputs.n - 1)..inputs.n | join(",") }}', '[1,2,3] [-1,0,1] 2,3'],
    ['{% for i in 0..2 %}{{ i }}{% endfor %}', '012'],
    ['{{ "a?b" }} {{ inputs.n ?? 0 + 1 }} {{ inputs.missing is defined ? 1 : 2 }}', 'a?b 4 2'],
    ['{{ inputs.missing ?? -1 }} {{ inputs.missing ?? "x" | upper }}', '-1 X'],
    ['{% if inputs.name %}a{% endif %}{% if "false" %}b{% endif %}{% if "0" %}c{% endif %}{% if inputs.empty %}d{% endif %}', 'a'],
    ['{% if inputs.list %}a{% endif %}{% if [] %}b{% endif %}{% if 0 %}c{% endif %}{% if inputs.nul %}d{% endif %}', 'a'],
    ['{% filter upper %}hi {{ inputs.name }}{% endfilter %}', 'HI WORLD'],
    ['{{ "<a>" | escape }}{{ inputs.name | raw }}', '&lt;a&gt;World'],
    ['{{ 1234.5 | numberformat("#,##0.0") }}', '1,234.5'],
    ['{% if inputs.missing is defined and inputs.missing > 1 %}x{% else %}y{% endif %}', 'y'],
    ['{% for i in inputs.list %}{% set tmp = i %}{% endfor %}{{ tmp ?? "scoped" }}', 'scoped'],
    ['{% for a in [[1, 2], [3]] %}{% for b in a %}{{ loop.index }}{{ b }}{% endfor %};{% endfor %}', '0112;03;'],
  ])('%s', (template, expected) => {
    expect(r.render(template, vars)).toBe(expected);
  });
});

describe('strict variables', () => {
  it.each([
    ['{{ inputs.foo }}', 'Missing variable `inputs.foo` in `{{ inputs.foo }}`'],
    ['{{ outputs.t.missing }}', 'Missing variable `outputs.t.missing`'],
    ['{{ nothing }}', 'Missing variable `nothing`'],
    ['{{ taskrun.undef }}', 'Missing variable `taskrun.undef`'],
    ["x {{ outputs.task['other key'].attr }}", "Missing variable `outputs.task['other key']`"],
    ['{{ inputs.list[7] }}', 'Missing variable `inputs.list[7]`'],
    ['{{ inputs.nul.deeper }}', 'Missing variable `inputs.nul.deeper`'],
    ['{{ inputs.a ?? inputs.b }}', 'Missing variable `inputs.b`'],
    ['{{ inputs.name | nosuchfilter }}', 'Unknown filter `nosuchfilter`'],
    ['{{ nosuchfn() }}', 'Unknown function `nosuchfn`'],
    ['{{ inputs.name ', 'Invalid expression'],
    ['{% if inputs.foo %}x{% endif %}', 'Missing variable `inputs.foo`'],
  ])('%s fails', (template, message) => {
    expect(() => r.render(template, vars)).toThrow(ExpressionError);
    expect(() => r.render(template, vars)).toThrow(message);
  });
});

describe('renderTyped', () => {
  it.each<[unknown, unknown]>([
    ['{{ inputs.list }}', [1, 2, 3]],
    ['  {{ inputs.n }}\n', 3],
    ['{{ inputs.flag }}', true],
    ['{{ inputs.nul }}', null],
    ['{{ inputs.map }}', { a: 1, b: 'x' }],
    ['{{ outputs.t.value }}', ['a', 'b']],
    ['{{ inputs.n }} items', '3 items'],
    ['[{{ inputs.n }}, 4]', [3, 4]],
    ['{"a": {{ inputs.n }}}', { a: 3 }],
    ['[not json', '[not json'],
    ['plain', 'plain'],
    [42, 42],
    [{ k: '{{ inputs.n }}' }, { k: '3' }],
  ])('%j', (value, expected) => {
    expect(r.renderTyped(value, vars)).toEqual(expected);
  });
});

describe('renderValue', () => {
  it('renders strings deep inside objects and arrays, keys too', () => {
    const value = { '{{ task.id }}': ['{{ inputs.name }}', 1, { x: '{{ inputs.n + 1 }}' }], plain: true };
    expect(r.renderValue(value, vars)).toEqual({ t1: ['World', 1, { x: '4' }], plain: true });
  });

  it('returns plain strings unchanged', () => {
    const text = 'echo ${#arr[@]} and { not a template }';
    expect(r.render(text, vars)).toBe(text);
  });
});
