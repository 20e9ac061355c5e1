// Valid flows: every task type, triggers, inputs/outputs, Kestra aliases, normalization and defaults.
import { describe, expect, it } from 'vitest';
import type { Task } from '../core/types.js';
import { FlowValidationError } from './errors.js';
import { parseFlow, validateFlow, validateTask } from './flow.js';
import { allTasks } from './traverse.js';

/** Parse a flow made of the given task YAML (indented as list items under `tasks:`), failing with all issues. */
function flowOf(tasksYaml: string): ReturnType<typeof parseFlow> {
  const source = `id: f\nnamespace: company.team\ntasks:\n${tasksYaml}`;
  try {
    return parseFlow(source);
  } catch (err) {
    if (err instanceof FlowValidationError) throw new Error(JSON.stringify(err.errors, null, 1));
    throw err;
  }
}

const TASKS: [string, string][] = [
  ['Sequential', `
  - id: seq
    type: ai.service.plugin.core.flow.Sequential
    tasks:
      - { id: a, type: ai.service.plugin.core.log.Log, message: a }
    errors:
      - { id: e, type: ai.service.plugin.core.log.Log, message: e }
    finally:
      - { id: fin, type: ai.service.plugin.core.log.Log, message: f }`],
  ['Parallel', `
  - id: par
    type: ai.service.plugin.core.flow.Parallel
    concurrent: 2
    tasks:
      - { id: a, type: ai.service.plugin.core.log.Log, message: a }
      - { id: b, type: ai.service.plugin.core.log.Log, message: b }`],
  ['Switch', `
  - id: sw
    type: ai.service.plugin.core.flow.Switch
    value: "{{ inputs.kind }}"
    cases:
      A:
        - { id: a, type: ai.service.plugin.core.log.Log, message: a }
      "1": []
    defaults:
      - { id: d, type: ai.service.plugin.core.log.Log, message: d }`],
  ['If', `
  - id: if
    type: ai.service.plugin.core.flow.If
    condition: "{{ inputs.ok }}"
    then:
      - { id: t, type: ai.service.plugin.core.log.Log, message: t }
    else:
      - { id: e, type: ai.service.plugin.core.log.Log, message: e }`],
  ['EachSequential', `
  - id: each
    type: ai.service.plugin.core.flow.EachSequential
    value: ["a", "b", 3]
    tasks:
      - { id: a, type: ai.service.plugin.core.log.Log, message: "{{ taskrun.value }}" }`],
  ['EachParallel', `
  - id: each
    type: ai.service.plugin.core.flow.EachParallel
    value: '["a", "b"]'
    concurrent: "{{ vars.n }}"
    tasks:
      - { id: a, type: ai.service.plugin.core.log.Log, message: "{{ taskrun.value }}" }`],
  ['ForEachItem', `
  - id: fe
    type: ai.service.plugin.core.flow.ForEachItem
    items: "{{ inputs.file }}"
    batch: { rows: 4 }
    namespace: company.team
    flowId: child
    revision: 2
    inputs: { json: "{{ taskrun.items }}" }
    labels: { a: b }
    wait: true
    transmitFailed: true
    inheritLabels: true`],
  ['Subflow', `
  - id: sub
    type: ai.service.plugin.core.flow.Subflow
    namespace: company.team
    flowId: child
    inputs: { x: 1 }
    labels: [{ key: a, value: b }]
    wait: true
    transmitFailed: true`],
  ['Kestra spellings accepted with a warning at run time: transmitFailed without wait, deprecated Subflow outputs', `
  - id: sub
    type: ai.service.plugin.core.flow.Subflow
    namespace: company.team
    flowId: child
    transmitFailed: true
    outputs: { v: "{{ outputs.calc.value }}" }
  - id: fe
    type: ai.service.plugin.core.flow.ForEachItem
    items: "{{ inputs.file }}"
    namespace: company.team
    flowId: child
    wait: false
    transmitFailed: true`],
  ['Subflow with a templated name (bounded at run time by MAX_SUBFLOW_DEPTH), or the same id in another namespace', `
  - id: sub
    type: ai.service.plugin.core.flow.Subflow
    namespace: company.team
    flowId: "{{ flow.id }}"
  - id: other
    type: ai.service.plugin.core.flow.Subflow
    namespace: company.other
    flowId: f`],
  ['AllowFailure', `
  - id: af
    type: ai.service.plugin.core.flow.AllowFailure
    tasks:
      - { id: fail, type: ai.service.plugin.core.execution.Fail }`],
  ['Fail', `
  - id: fail
    type: ai.service.plugin.core.execution.Fail
    condition: "{{ inputs.x == 1 }}"
    errorMessage: bad`],
  ['WorkingDirectory', `
  - id: wd
    type: ai.service.plugin.core.flow.WorkingDirectory
    inputFiles: { a.txt: hello }
    namespaceFiles: { enabled: true, include: [scripts/**], exclude: ["**/*.md"], ifExists: OVERWRITE }
    tasks:
      - { id: sh, type: ai.service.plugin.scripts.shell.Commands, commands: [cat a.txt] }`],
  ['Pause', `
  - id: pause
    type: ai.service.plugin.core.flow.Pause
    pauseDuration: PT0.5S
    behavior: RESUME
    onResume:
      - { id: approved, type: BOOLEAN, defaults: true }`],
  ['ForEach', `
  - id: each
    type: io.kestra.plugin.core.flow.ForEach
    values: ["a", { k: 1 }]
    concurrencyLimit: 0
    tasks:
      - { id: x, type: ai.service.plugin.core.log.Log, message: "{{ taskrun.value }} {{ taskrun.iteration }}" }
    errors:
      - { id: e, type: ai.service.plugin.core.log.Log, message: e }`],
  ['LoopUntil', `
  - id: loop
    type: io.kestra.plugin.core.flow.LoopUntil
    condition: "{{ outputs.x.value == '3' }}"
    failOnMaxReached: true
    checkFrequency: { maxIterations: 5, maxDuration: PT1H, interval: PT1S }
    tasks:
      - { id: x, type: ai.service.plugin.core.debug.Return, format: "{{ outputs.loop.iterationCount }}" }`],
  ['Exit', `
  - { id: exit, type: io.kestra.plugin.core.execution.Exit, state: CANCELED }`],
  ['Pause with tasks', `
  - id: pause
    type: ai.service.plugin.core.flow.Pause
    timeout: PT1H
    tasks:
      - { id: after, type: ai.service.plugin.core.log.Log, message: resumed }`],
  ['DAG', `
  - id: dag
    type: ai.service.plugin.core.flow.DAG
    concurrent: 2
    tasks:
      - task: { id: a, type: ai.service.plugin.core.log.Log, message: a }
      - task: { id: b, type: ai.service.plugin.core.log.Log, message: b }
        dependsOn: [a]
      - task: { id: c, type: ai.service.plugin.core.log.Log, message: c }
        dependsOn: [a, b]`],
  ['Request', `
  - id: req
    type: ai.service.plugin.core.http.Request
    uri: https://example.com/api
    method: POST
    headers: { X-A: b, X-N: 1 }
    contentType: application/json
    body: '{"a": 1}'
    options: { allowFailed: true }
    allowFailed: "{{ inputs.lenient }}"`],
  ['Download', `
  - id: dl
    type: ai.service.plugin.core.http.Download
    uri: https://example.com/file.csv`],
  ['Log', `
  - id: log
    type: ai.service.plugin.core.log.Log
    message: [one, two]
    level: WARN
    logLevel: DEBUG
    timeout: PT1M
    retry: { type: constant, interval: PT0.25S, maxAttempt: 3, warningOnRetry: true }`],
  ['runIf, allowWarning and retry on Fail and flowables', `
  - id: seq
    type: ai.service.plugin.core.flow.Sequential
    runIf: "{{ inputs.go }}"
    allowWarning: true
    retry: { type: constant, interval: PT1S, maxAttempt: 2 }
    tasks:
      - id: inner
        type: io.kestra.plugin.core.execution.Fail
        runIf: false
        retry: { type: exponential, interval: PT1S, maxInterval: PT5S, maxDuration: PT1M }`],
  ['Return', `
  - id: ret
    type: ai.service.plugin.core.debug.Return
    format: "{{ execution.id }}"`],
  ['Labels', `
  - id: lab
    type: ai.service.plugin.core.execution.Labels
    labels: { env: prod }`],
  ['Labels as JSON text (no expression), or with a nested map value (stored as JSON text)', `
  - { id: lab, type: ai.service.plugin.core.execution.Labels, labels: '{ "env": "prod" }' }
  - { id: lab2, type: ai.service.plugin.core.execution.Labels, labels: '[{ "key": "env", "value": "prod" }]' }
  - { id: lab3, type: ai.service.plugin.core.execution.Labels, labels: { stage: { name: done } } }
  - { id: lab4, type: ai.service.plugin.core.execution.Labels, labels: [{ key: stage, value: { name: done } }] }`],
  ['KV Set/Get/Delete', `
  - id: set
    type: ai.service.plugin.core.kv.Set
    key: k
    value: { a: 1 }
    namespace: company
    overwrite: false
    ttl: P1D
    kvType: JSON
  - id: get
    type: ai.service.plugin.core.kv.Get
    key: k
    errorOnMissing: true
  - id: del
    type: ai.service.plugin.core.kv.Delete
    key: k
    errorOnMissing: "{{ false }}"`],
  ['TemplatedTask', `
  - id: tpl
    type: ai.service.plugin.core.templating.TemplatedTask
    spec: |
      type: ai.service.plugin.core.log.Log
      message: "{{ inputs.x }}"`],
  ['shell Script (Process runner)', `
  - id: sh
    type: ai.service.plugin.scripts.shell.Script
    taskRunner: { type: ai.service.plugin.core.runner.Process }
    env: { A: "1", B: 2 }
    beforeCommands: [echo hi]
    warningOnStdErr: false
    script: echo hello`],
  ['python Script (Docker runner)', `
  - id: py
    type: ai.service.plugin.scripts.python.Script
    containerImage: python:3.12-slim
    taskRunner:
      type: ai.service.plugin.scripts.runner.docker.Docker
      pullPolicy: IF_NOT_PRESENT
    inputFiles: { main.py: "print(1)" }
    outputFiles: ["*.csv"]
    script: print("hi")`],
  ['python Commands', `
  - id: py
    type: ai.service.plugin.scripts.python.Commands
    interpreter: [/bin/sh, -c]
    namespaceFiles: { enabled: true }
    commands: [python main.py]
    failFast: true`],
  ['extra core runnables', `
  - { id: assert, type: io.kestra.plugin.core.execution.Assert, conditions: ["{{ 1 == 1 }}"], errorMessage: no }
  - { id: out, type: io.kestra.plugin.core.output.OutputValues, values: { a: "{{ inputs.x }}" } }
  - { id: sleep, type: io.kestra.plugin.core.flow.Sleep, duration: PT0.1S }
  - { id: write, type: io.kestra.plugin.core.storage.Write, content: hello, extension: .txt }
  - { id: keys, type: io.kestra.plugin.core.kv.GetKeys, prefix: a }`],
  ['storage and log-fetch tasks', `
  - { id: fetch, type: io.kestra.plugin.core.log.Fetch, level: ERROR, tasksId: [keys] }
  - { id: concat, type: io.kestra.plugin.core.storage.Concat, files: "{{ outputs.fetch.uri | json }}", separator: "\\n", extension: .txt }
  - { id: split, type: io.kestra.core.tasks.storages.Split, from: "{{ outputs.concat.uri }}", rows: 10 }
  - { id: size, type: io.kestra.plugin.core.storage.Size, uri: "{{ outputs.concat.uri }}" }
  - { id: filter, type: io.kestra.plugin.core.storage.FilterItems, from: "{{ outputs.fetch.uri }}", filterCondition: "{{ level == 'ERROR' }}", filterType: EXCLUDE, errorOrNullBehavior: INCLUDE }
  - { id: dedup, type: io.kestra.plugin.core.storage.DeduplicateItems, from: "{{ outputs.fetch.uri }}", expr: "{{ message }}" }
  - { id: delete, type: io.kestra.plugin.core.storage.Delete, uri: "{{ outputs.concat.uri }}", errorOnMissing: true }
  - { id: labels, type: io.kestra.plugin.core.execution.Labels, labels: "{{ {'a': 'b'} | json }}" }`],
  ['other script languages', `
  - { id: node, type: io.kestra.plugin.scripts.node.Script, script: console.log(1) }
  - { id: ruby, type: io.kestra.plugin.scripts.ruby.Commands, commands: [ruby -v] }
  - { id: r, type: io.kestra.plugin.scripts.r.Script, script: print(1) }
  - { id: julia, type: io.kestra.plugin.scripts.julia.Commands, commands: [julia -v] }
  - { id: pwsh, type: io.kestra.plugin.scripts.powershell.Script, script: Write-Output 1 }
  - { id: py, type: io.kestra.plugin.scripts.python.Script, dependencies: [requests], runner: PROCESS, script: print(1) }`],
];

describe('valid flows', () => {
  it('accepts valid templates everywhere, and never checks what is not rendered', () => {
    const flow = flowOf(`
  - id: ok
    type: ai.service.plugin.core.log.Log
    description: "Explains {{ this | nosuchfilter }}: descriptions are not rendered"
    message: >-
      {{ inputs.x | default('y') }} {{ inputs.x is defined }} {{ inputs.x is not null }} {{ now() }}
      {{ [1, 2] | jq('.[]') | first }} {{ 'a' | replace('(a+)+$', 'b', true) }} {% raw %}{{ nosuchfn() }}{% endraw %}
      {# {{ 1 + }} #} {{ outputs.unknown.at.save.time ?? '' }}`);
    expect(flow.tasks[0].message).toContain("{{ inputs.x | default('y') }}");
  });

  it.each(TASKS)('%s', (_name, yaml) => {
    const flow = flowOf(yaml);
    expect(flow.tasks.length).toBeGreaterThan(0);
  });

  it('accepts the whole flow feature set and keeps it as written', () => {
    const flow = parseFlow(`
id: full-flow_1.x
namespace: company.team.sub
description: "# Title"
labels: { env: prod, version: 2 }
revision: 3
disabled: false
variables: { greeting: hello, nested: { a: [1, 2] } }
inputs:
  - { id: name, type: STRING, defaults: world, validator: "[a-z]+" }
  - { id: count, type: INT, required: false, min: 1, max: 10, defaults: 3 }
  - { id: when, type: DATETIME, required: false, min: "2020-01-01T00:00:00Z" }
  - { id: kind, type: ENUM, values: [A, B], defaults: A }
  - { id: list, type: ARRAY, itemType: INT, defaults: [1, 2] }
  - { id: file, type: FILE, required: false }
  - { id: cfg.nested, type: JSON, defaults: '{"a": 1}' }
  - { id: wait, type: DURATION, min: PT1S, defaults: PT5S }
  - { id: templ, type: INT, defaults: "{{ 1 + 1 }}" }
outputs:
  - { id: out, type: STRING, value: "{{ outputs.hello.value }}" }
tasks:
  - id: hello
    type: io.kestra.plugin.core.debug.Return
    format: "{{ vars.greeting }} {{ inputs.name }}"
errors:
  - { id: onError, type: io.kestra.plugin.core.log.Log, message: failed }
finally:
  - { id: always, type: io.kestra.plugin.core.log.Log, message: done }
triggers:
  - id: schedule
    type: io.kestra.plugin.core.trigger.Schedule
    cron: "*/5 * * * *"
    timezone: Europe/Paris
    recoverMissedSchedules: NONE
    backfill: { start: "2024-01-01T00:00:00Z" }
    conditions:
      - { type: io.kestra.plugin.core.condition.DayWeekCondition, dayOfWeek: MONDAY, date: "{{ trigger.date }}" }
  - id: upstream
    type: io.kestra.plugin.core.trigger.Flow
    inputs: { name: "{{ trigger.outputs.x }}" }
    conditions:
      - { type: io.kestra.plugin.core.condition.ExecutionStatusCondition, in: [SUCCESS] }
      - { type: io.kestra.plugin.core.condition.ExecutionFlowCondition, namespace: a, flowId: b }
  - { id: secs, type: io.kestra.plugin.core.trigger.Schedule, cron: "0 */5 * * * *", withSeconds: true }
  - { id: hourly, type: io.kestra.plugin.core.trigger.Schedule, cron: "@hourly", disabled: true }
  - { id: hook, type: io.kestra.plugin.core.trigger.Webhook, key: 4wjtkzwVGBM9yKnjm3yv8r }
  - { id: poll, type: io.kestra.plugin.jdbc.postgresql.Trigger, interval: PT1M, url: "jdbc:postgresql://db:5432/app", sql: select 1 }
pluginDefaults:
  - type: io.kestra.plugin.core.log.Log
    values: { level: ERROR }
retry: { type: exponential, interval: PT1S, maxInterval: PT1M, maxDuration: PT1H, behavior: RETRY_FAILED_TASK }
concurrency: { limit: 2 }
`);
    expect(flow.id).toBe('full-flow_1.x');
    expect(flow.revision).toBe(3);
    expect(flow.concurrency).toEqual({ limit: 2, behavior: 'QUEUE' });
    expect(flow.labels).toEqual({ env: 'prod', version: '2' });
    expect(flow.tasks[0].type).toBe('ai.service.plugin.core.debug.Return');
    expect(flow.errors?.[0].type).toBe('ai.service.plugin.core.log.Log');
    expect(flow.finally?.[0].id).toBe('always');
    expect(flow.triggers?.map((t) => t.type)).toEqual([
      'ai.service.plugin.core.trigger.Schedule', 'ai.service.plugin.core.trigger.Flow',
      'ai.service.plugin.core.trigger.Schedule', 'ai.service.plugin.core.trigger.Schedule', 'ai.service.plugin.core.trigger.Webhook', 'ai.service.plugin.jdbc.postgresql.Trigger',
    ]);
    expect((flow.triggers?.[0].conditions as Task[])[0].type).toBe('ai.service.plugin.core.condition.DayWeekCondition');
    expect(flow.pluginDefaults?.[0].type).toBe('ai.service.plugin.core.log.Log');
    expect(flow.inputs?.map((i) => i.id)).toContain('cfg.nested');
    expect(flow.variables).toEqual({ greeting: 'hello', nested: { a: [1, 2] } });
    // Plugin defaults are not baked into the returned flow.
    expect(flow.errors?.[0]).toEqual({ id: 'onError', type: 'ai.service.plugin.core.log.Log', message: 'failed' });
  });

  it('normalizes nested aliases, task runners and old Kestra names', () => {
    const flow = flowOf(`
  - id: wd
    type: io.kestra.core.tasks.flows.Worker
    tasks:
      - id: dag
        type: io.kestra.plugin.core.flow.Dag
        tasks:
          - task:
              id: sh
              type: io.kestra.plugin.scripts.shell.Commands
              taskRunner: { type: io.kestra.plugin.scripts.runner.docker.Docker, containerImage: alpine }
              commands: [ls]`);
    expect(allTasks(flow).map((t) => t.type)).toEqual([
      'ai.service.plugin.core.flow.WorkingDirectory', 'ai.service.plugin.core.flow.DAG',
      'ai.service.plugin.scripts.shell.Commands',
    ]);
    expect((allTasks(flow)[2].taskRunner as Task).type).toBe('ai.service.plugin.scripts.runner.docker.Docker');
  });

  it('takes required properties from plugin defaults (also by type prefix)', () => {
    const flow = parseFlow(`
id: f
namespace: n
pluginDefaults:
  - type: io.kestra.plugin.core.http
    values: { uri: "https://example.com", unrelated: x }
tasks:
  - { id: r, type: io.kestra.plugin.core.http.Request }`);
    expect(flow.tasks[0]).toEqual({ id: 'r', type: 'ai.service.plugin.core.http.Request' });
  });

  it('supports YAML anchors and merge keys', () => {
    const flow = parseFlow(`
id: f
namespace: n
tasks:
  - &base { id: a, type: io.kestra.plugin.core.log.Log, message: hi, level: WARN }
  - <<: *base
    id: b
`);
    expect(flow.tasks[1]).toEqual({ id: 'b', type: 'ai.service.plugin.core.log.Log', message: 'hi', level: 'WARN' });
  });

  it('treats keys without a value as absent (flow, tasks, inputs, triggers), keeps nulls deeper', () => {
    const flow = parseFlow(`
id: f
namespace: n
description:
errors:
inputs:
  - { id: a, type: STRING, description: , defaults: }
tasks:
  - id: l
    type: io.kestra.plugin.core.log.Log
    message: hi
    timeout:
  - { id: s, type: io.kestra.plugin.core.kv.Set, key: k, value: { a: null } }
`);
    expect(flow).not.toHaveProperty('description');
    expect(flow).not.toHaveProperty('errors');
    expect(flow.inputs?.[0]).toEqual({ id: 'a', type: 'STRING' });
    expect(flow.tasks[0]).toEqual({ id: 'l', type: 'ai.service.plugin.core.log.Log', message: 'hi' });
    expect(flow.tasks[1].value).toEqual({ a: null });
  });

  it("accepts an input's former spelling `name` for `id` (alone, or equal to it)", () => {
    const flow = parseFlow(`
id: f
namespace: n
inputs: [{ name: who, type: STRING }, { id: same, name: same, type: INT }]
tasks: [{ id: l, type: io.kestra.plugin.core.log.Log, message: "{{ inputs.who }}" }]`);
    expect(flow.inputs).toEqual([{ id: 'who', type: 'STRING' }, { id: 'same', type: 'INT' }]);
  });

  it('accepts the legacy taskDefaults name', () => {
    const flow = parseFlow(`
id: f
namespace: n
taskDefaults: [{ type: io.kestra.plugin.core.log.Log, values: { message: hi } }]
tasks: [{ id: l, type: io.kestra.plugin.core.log.Log }]`);
    expect(flow.pluginDefaults).toEqual([{ type: 'ai.service.plugin.core.log.Log', values: { message: 'hi' } }]);
  });

  it('validateFlow takes a parsed object and does not modify it', () => {
    const doc = { id: 'f', namespace: 'n', concurrency: { limit: 1 }, tasks: [{ id: 'l', type: 'io.kestra.plugin.core.log.Log', message: 'x' }] };
    const flow = validateFlow(doc);
    expect(flow.tasks[0].type).toBe('ai.service.plugin.core.log.Log');
    expect(doc.tasks[0].type).toBe('io.kestra.plugin.core.log.Log');
    expect(doc.concurrency).toEqual({ limit: 1 });
  });
});

describe('validateTask', () => {
  it('normalizes and validates a single task', () => {
    expect(validateTask({ id: 'a', type: 'io.kestra.plugin.core.log.Log', message: 'hi' }))
      .toEqual({ id: 'a', type: 'ai.service.plugin.core.log.Log', message: 'hi' });
  });

  it('reports paths relative to the task', () => {
    expect(() => validateTask({ id: 'a', type: 'io.kestra.plugin.core.http.Request', foo: 1 })).toThrow(FlowValidationError);
    try {
      validateTask({ id: 'a', type: 'io.kestra.plugin.core.http.Request', foo: 1 });
    } catch (err) {
      expect((err as FlowValidationError).errors.map((i) => i.path)).toEqual(['uri', 'foo']);
    }
  });
});
