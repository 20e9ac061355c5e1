// Reserved names at save: every position where a flow names an object key refuses `__proto__`, `constructor` and
// `prototype` (whole or as a dotted segment) with the field's path; look-alikes pass; validating never pollutes.
import { describe, expect, it } from 'vitest';
import { FlowValidationError, type ValidationIssue } from './errors.js';
import { parseFlow, validateFlow } from './flow.js';

const P = 'ai.service.plugin.';
const head = 'id: f\nnamespace: company.team\n';
const log = (id = 'l') => `  - { id: ${id}, type: ${P}core.log.Log, message: hi }\n`;
const flow = (extra: string, tasks = log()) => `${head}${extra}tasks:\n${tasks}`;
const one = (task: string) => flow('', `  - ${task}\n`);

function issuesOf(run: () => unknown): ValidationIssue[] {
  try {
    run();
  } catch (err) {
    if (err instanceof FlowValidationError) return err.errors;
    throw err;
  }
  throw new Error('flow was accepted');
}

const CASES: [string, string, string, string][] = [
  ['input id segment', flow('inputs: [{ id: a.__proto__.disabled, type: BOOLEAN, defaults: true }]\n'),
    'inputs[0].id', '`a.__proto__.disabled` uses the reserved name `__proto__`'],
  ['input id constructor.prototype', flow('inputs: [{ id: constructor.prototype.x, type: STRING }]\n'),
    'inputs[0].id', '`constructor.prototype.x` uses the reserved name `constructor`'],
  ['input id prototype', flow('inputs: [{ id: prototype, type: STRING }]\n'), 'inputs[0].id', 'reserved name `prototype`'],
  ['output id', flow('outputs: [{ id: a.constructor, type: STRING, value: x }]\n'), 'outputs[0].id', 'reserved name `constructor`'],
  ['task id', flow('', log('constructor')), 'tasks[0].id', '`constructor` uses the reserved name `constructor`'],
  ['nested task id', one(`{ id: s, type: ${P}core.flow.Sequential, tasks: [{ id: prototype, type: ${P}core.log.Log, message: x }] }`),
    'tasks[0].tasks[0].id', 'reserved name `prototype`'],
  ['errors task id', flow(`errors:\n${log('prototype')}`), 'errors[0].id', 'reserved name `prototype`'],
  ['trigger id', flow(`triggers: [{ id: constructor, type: ${P}core.trigger.Webhook, key: k }]\n`), 'triggers[0].id', 'reserved name `constructor`'],
  ['flow label map key', flow('labels: { __proto__: x }\n'), 'labels.__proto__', 'the key `__proto__` uses the reserved name `__proto__`'],
  ['flow label list key', flow('labels: [{ key: constructor, value: x }]\n'), 'labels[0].key', '`constructor` uses the reserved name'],
  ['variables key', flow('variables: { a: { __proto__: { polluted: 1 } } }\n'), 'variables.a.__proto__', 'the key `__proto__`'],
  ['variables deep key', flow('variables: { a: [{ b: { constructor: { prototype: 1 } } }] }\n'),
    'variables.a[0].b.constructor', 'the key `constructor`'],
  ['variables dotted key', flow('variables: { "x.prototype": 1 }\n'), 'variables["x.prototype"]', 'reserved name `prototype`'],
  ['pluginDefaults values key', flow(`pluginDefaults: [{ type: ${P}core.http.Request, values: { headers: { __proto__: { a: b } } } }]\n`),
    'pluginDefaults[0].values.headers.__proto__', 'the key `__proto__`'],
  ['Subflow inputs key', one(`{ id: s, type: ${P}core.flow.Subflow, namespace: n, flowId: c, inputs: { "a.__proto__.b": 1 } }`),
    'tasks[0].inputs["a.__proto__.b"]', 'reserved name `__proto__`'],
  ['Subflow labels key', one(`{ id: s, type: ${P}core.flow.Subflow, namespace: n, flowId: c, labels: [{ key: __proto__, value: v }] }`),
    'tasks[0].labels[0].key', 'reserved name `__proto__`'],
  ['ForEachItem inputs key', one(`{ id: e, type: ${P}core.flow.ForEachItem, items: x, namespace: n, flowId: c, inputs: { constructor: 1 } }`),
    'tasks[0].inputs.constructor', 'the key `constructor`'],
  ['trigger inputs key', flow(`triggers: [{ id: w, type: ${P}core.trigger.Webhook, key: k, inputs: { prototype: 1 } }]\n`),
    'triggers[0].inputs.prototype', 'the key `prototype`'],
  ['Schedule labels key', flow(`triggers: [{ id: s, type: ${P}core.trigger.Schedule, cron: "@daily", labels: { __proto__: x } }]\n`),
    'triggers[0].labels.__proto__', 'the key `__proto__`'],
  ['Labels task map key', one(`{ id: l, type: ${P}core.execution.Labels, labels: { constructor: x } }`),
    'tasks[0].labels.constructor', 'the key `constructor`'],
  ['Labels task list key', one(`{ id: l, type: ${P}core.execution.Labels, labels: [{ key: a.__proto__, value: x }] }`),
    'tasks[0].labels[0].key', 'reserved name `__proto__`'],
  ['script env key', one(`{ id: s, type: ${P}scripts.shell.Commands, commands: [ls], env: { __proto__: x } }`),
    'tasks[0].env.__proto__', 'the key `__proto__`'],
  ['script inputFiles key', one(`{ id: s, type: ${P}scripts.shell.Commands, commands: [ls], inputFiles: { constructor: x } }`),
    'tasks[0].inputFiles.constructor', 'the key `constructor`'],
  ['script outputFiles name', one(`{ id: s, type: ${P}scripts.shell.Commands, commands: [ls], outputFiles: [out/__proto__] }`),
    'tasks[0].outputFiles[0]', '`out/__proto__` uses the reserved name `__proto__`'],
  ['http headers key', one(`{ id: r, type: ${P}core.http.Request, uri: x, headers: { constructor: x } }`),
    'tasks[0].headers.constructor', 'the key `constructor`'],
  ['OutputValues key', one(`{ id: o, type: ${P}core.output.OutputValues, values: { __proto__: { x: 1 } } }`),
    'tasks[0].values.__proto__', 'the key `__proto__`'],
  ['Switch case key', one(`{ id: s, type: ${P}core.flow.Switch, value: x, cases: { constructor: [{ id: c, type: ${P}core.log.Log, message: x }] } }`),
    'tasks[0].cases.constructor', 'the key `constructor`'],
  ['Pause onResume id', one(`{ id: p, type: ${P}core.flow.Pause, onResume: [{ id: x.prototype, type: STRING }] }`),
    'tasks[0].onResume[0].id', 'reserved name `prototype`'],
  ['MultipleCondition id and names', flow(`triggers: [{ id: t, type: ${P}core.trigger.Flow, conditions: [{ id: constructor, type: ${P}core.condition.MultipleCondition,
      conditions: { __proto__: { type: ${P}core.condition.ExecutionFlowCondition, namespace: n, flowId: x } } }] }]\n`),
    'triggers[0].conditions[0].id', 'reserved name `constructor`'],
  ['MultipleCondition condition name', flow(`triggers: [{ id: t, type: ${P}core.trigger.Flow, conditions: [{ type: ${P}core.condition.MultipleCondition,
      conditions: { prototype: { type: ${P}core.condition.ExecutionFlowCondition, namespace: n, flowId: x } } }] }]\n`),
    'triggers[0].conditions[0].conditions.prototype', 'the key `prototype`'],
];

describe('reserved names refused at save', () => {
  it.each(CASES.map(([name, source, path, reason]) => [name, path, source, reason]))('%s → %s', (_name, path, source, reason) => {
    const issues = issuesOf(() => parseFlow(source));
    const atPath = issues.filter((i) => i.path === path);
    expect(atPath.map((i) => i.message).join(' | ') || JSON.stringify(issues)).toContain(reason);
  });

  it('names the field in the error message', () => {
    expect(() => parseFlow(flow('inputs: [{ id: a.__proto__.disabled, type: BOOLEAN, defaults: true }]\n')))
      .toThrow('Invalid flow: inputs[0].id: `a.__proto__.disabled` uses the reserved name `__proto__`');
  });

  it('refuses own `__proto__` keys of a parsed JSON document (Kubernetes admission, API JSON)', () => {
    const doc = JSON.parse(`{"id":"f","namespace":"n","variables":{"__proto__":{"polluted":1}},
      "tasks":[{"id":"l","type":"${P}core.log.Log","message":"x"}]}`) as unknown;
    expect(issuesOf(() => validateFlow(doc))).toContainEqual({ path: 'variables.__proto__', message: 'the key `__proto__` uses the reserved name `__proto__`' });
  });

  it('accepts look-alikes: names that only contain a reserved word', () => {
    const source = flow(`labels: { proto: a, constructors: b }
inputs: [{ id: my_prototype.a, type: STRING, required: false }, { id: a.__proto, type: STRING, required: false }]
variables: { Constructor: 1, prototypes: { __proto_: 2 } }
`, log('proto-type'));
    expect(() => parseFlow(source)).not.toThrow();
  });
});

describe('validating a hostile flow', () => {
  it.each(['ai.service.plugin.constructor', 'ai.service.plugin.toString', 'ai.service.plugin.__proto__', 'io.kestra.hasOwnProperty',
    'io.kestra.constructor'])('a task type named like an Object.prototype member (%s) is an unknown type, not a crash', (type) => {
    const issues = issuesOf(() => parseFlow(one(`{ id: a, type: ${type} }`)));
    expect(issues).toContainEqual({ path: 'tasks[0].type', message: `Unknown task type \`${type}\`` });
  });

  it.each(['constructor', 'hasOwnProperty', 'toString'])('an input type named %s is refused, not a crash', (type) => {
    const issues = issuesOf(() => parseFlow(flow(`inputs: [{ id: a, type: ${type}, defaults: x }]\n`)));
    expect(issues.find((i) => i.path === 'inputs[0].type')?.message).toContain('is not one of STRING');
  });

  it('leaves Object.prototype and the checked tasks untouched (plugin defaults are merged without prototypes)', () => {
    const before = Object.getOwnPropertyNames(Object.prototype);
    const source = flow(`pluginDefaults:
  - type: ${P}core.log.Log
    values: { __proto__: { disabled: true, polluted: yes }, constructor: { prototype: { polluted: yes } } }
`);
    const issues = issuesOf(() => parseFlow(source));
    expect(issues.map((i) => i.path)).toEqual(['pluginDefaults[0].values.__proto__', 'pluginDefaults[0].values.constructor',
      'pluginDefaults[0].values.constructor.prototype']);
    expect(Object.getOwnPropertyNames(Object.prototype)).toEqual(before);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });
});
