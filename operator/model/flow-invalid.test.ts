// Invalid flows: each validation rule, asserting the exact field path and a reason substring.
import { describe, expect, it } from 'vitest';
import { FlowValidationError, type ValidationIssue } from './errors.js';
import { parseFlow } from './flow.js';

function issuesOf(source: string): ValidationIssue[] {
  try {
    parseFlow(source);
  } catch (err) {
    if (err instanceof FlowValidationError) return err.errors;
    throw err;
  }
  throw new Error('flow was accepted');
}

const head = 'id: f\nnamespace: company.team\n';
const withTasks = (tasks: string, extra = '') => `${head}${extra}tasks:\n${tasks}`;
const log = (id = 'l') => `  - { id: ${id}, type: ai.service.plugin.core.log.Log, message: hi }\n`;
const one = (task: string) => withTasks(`  - ${task}\n`);

const CASES: [string, string, string, string][] = [
  // Flow level
  ['missing id', `namespace: n\ntasks:\n${log()}`, 'id', 'required property `id`'],
  ['missing namespace', `id: f\ntasks:\n${log()}`, 'namespace', 'required property `namespace`'],
  ['missing tasks', head, 'tasks', 'required property `tasks`'],
  ['empty tasks', `${head}tasks: []`, 'tasks', 'must not be empty'],
  ['when and runIf that differ', one('{ id: t, type: io.kestra.plugin.core.log.Log, message: hi, when: "{{ true }}", runIf: "{{ false }}" }'), 'tasks[0].when', 'unknown property `when`'],
  ['SELECT without values', withTasks(log(), 'inputs:\n  - { id: c, type: SELECT }\n'), 'inputs[0].values', 'required'],
  ['MULTISELECT default not among values', withTasks(log(), 'inputs:\n  - { id: m, type: MULTISELECT, values: [a, b], defaults: [a, z] }\n'), 'inputs[0].defaults', 'is not one of a, b'],
  ['bad flow id', `id: -bad id\nnamespace: n\ntasks:\n${log()}`, 'id', 'not a valid id'],
  ['flow id too long', `id: ${'a'.repeat(101)}\nnamespace: n\ntasks:\n${log()}`, 'id', 'at most 100'],
  ['bad namespace', `id: f\nnamespace: Company Team\ntasks:\n${log()}`, 'namespace', 'not a valid namespace'],
  ['flow id reserved by the storage layout', `id: executions\nnamespace: n\ntasks:\n${log()}`, 'id', '`executions` is reserved'],
  ['namespace segment reserved by the storage layout', `id: f\nnamespace: a.executions.b\ntasks:\n${log()}`, 'namespace', '`executions` is reserved as a namespace segment'],
  ['namespace segment reserved for namespace files', `id: f\nnamespace: a._files\ntasks:\n${log()}`, 'namespace', '`_files` is reserved as a namespace segment'],
  ['unknown namespaceFiles property', one('{ id: s, type: ai.service.plugin.scripts.shell.Commands, commands: [ls], namespaceFiles: { enabled: true, includes: [a] } }'), 'tasks[0].namespaceFiles.includes', 'unknown property'],
  ['namespaceFiles ifExists', one('{ id: s, type: ai.service.plugin.scripts.shell.Commands, commands: [ls], namespaceFiles: { ifExists: REPLACE } }'), 'tasks[0].namespaceFiles.ifExists', 'OVERWRITE'],
  ['unknown top-level field', withTasks(log(), 'foo: 1\n'), 'foo', 'unknown property `foo`'],
  ['a listener condition that is not about the execution', withTasks(log(), 'listeners:\n  - conditions: [{ type: io.kestra.plugin.core.condition.WeekendCondition }]\n    tasks: [{ id: lt, type: io.kestra.plugin.core.log.Log, message: hi }]\n'), 'listeners[0].conditions[0].type', '`WeekendCondition` cannot be checked by a listener'],
  ['a listener condition inside Not that is not about the execution', withTasks(log(), 'listeners:\n  - conditions: [{ type: io.kestra.plugin.core.condition.NotCondition, conditions: [{ type: io.kestra.plugin.core.condition.ExpressionCondition, expression: "{{ true }}" }] }]\n    tasks: [{ id: lt, type: io.kestra.plugin.core.log.Log, message: hi }]\n'), 'listeners[0].conditions[0].conditions[0].type', 'cannot be checked by a listener'],
  ['a flow label whose value is a map (only the Labels task takes one)', withTasks(log(), 'labels:\n  stage: { name: done }\n'), 'labels.stage', ''],
  ['a listener without tasks', withTasks(log(), 'listeners:\n  - conditions: []\n'), 'listeners[0].tasks', 'required property `tasks`'],
  ['an afterExecution task id used in tasks', withTasks(log('a'), 'afterExecution:\n  - { id: a, type: io.kestra.plugin.core.log.Log, message: hi }\n'), 'afterExecution[0].id', 'duplicate task id `a`'],
  ['labels not strings map', withTasks(log(), 'labels: { a: { b: 1 } }\n'), 'labels.a', 'must be a string, a number or a boolean'],
  ['label list item without value', withTasks(log(), 'labels: [{ key: a }]\n'), 'labels[0].value', 'required'],
  ['variables not a map', withTasks(log(), 'variables: [1]\n'), 'variables', 'must be a map'],
  ['concurrency limit 0', withTasks(log(), 'concurrency: { limit: 0 }\n'), 'concurrency.limit', 'must be >= 1'],
  ['concurrency limit not int', withTasks(log(), 'concurrency: { limit: 1.5 }\n'), 'concurrency.limit', 'integer'],
  ['concurrency behavior', withTasks(log(), 'concurrency: { limit: 1, behavior: DROP }\n'), 'concurrency.behavior', 'not one of QUEUE, CANCEL, FAIL'],
  ['disabled not boolean', withTasks(log(), 'disabled: maybe\n'), 'disabled', 'must be a boolean'],
  ['revision not integer', withTasks(log(), 'revision: abc\n'), 'revision', 'must be an integer'],
  ['plugin default without values', withTasks(log(), 'pluginDefaults: [{ type: x }]\n'), 'pluginDefaults[0].values', 'required'],
  ['flow retry behavior', withTasks(log(), 'retry: { type: constant, interval: PT1S, maxAttempt: 2, behavior: NOPE }\n'),
    'retry.behavior', 'not one of'],
  ['flow retry without limit', withTasks(log(), 'retry: { type: constant, interval: PT1S }\n'), 'retry', 'maxAttempt` or `maxDuration'],
  ['errors not a list', withTasks(log(), 'errors: { id: x }\n'), 'errors', 'must be a list'],
  ['finally task invalid', withTasks(log(), 'finally: [{ id: z, type: ai.service.plugin.core.log.Log }]\n'), 'finally[0].message', 'required'],
  // Task common fields
  ['task without id', one('{ type: ai.service.plugin.core.log.Log, message: x }'), 'tasks[0].id', 'required property `id`'],
  ['task without type', one('{ id: a, message: x }'), 'tasks[0].type', 'required property `type`'],
  ['unknown task type', one('{ id: a, type: io.kestra.plugin.foo.Bar }'), 'tasks[0].type', 'Unknown task type `io.kestra.plugin.foo.Bar`'],
  ['internal task type', one('{ id: a, type: "ai.service.plugin.core.flow.ForEachItem$ForEachItemSplit" }'), 'tasks[0].type', 'internal task type'],
  ['bad task id', one('{ id: "a b", type: ai.service.plugin.core.log.Log, message: x }'), 'tasks[0].id', 'not a valid id'],
  ['dotted task id', one('{ id: a.b, type: ai.service.plugin.core.log.Log, message: x }'), 'tasks[0].id', 'not a valid id'],
  ['timeout not ISO', one('{ id: a, type: ai.service.plugin.core.log.Log, message: x, timeout: 5 seconds }'),
    'tasks[0].timeout', '`5 seconds` is not an ISO 8601 duration (e.g. PT5S)'],
  ['logLevel', one('{ id: a, type: ai.service.plugin.core.log.Log, message: x, logLevel: LOUD }'), 'tasks[0].logLevel', 'not one of TRACE'],
  ['allowFailure not boolean', one('{ id: a, type: ai.service.plugin.core.log.Log, message: x, allowFailure: "{{ x }}" }'),
    'tasks[0].allowFailure', 'must be a boolean'],
  ['unknown task property', one('{ id: a, type: ai.service.plugin.core.log.Log, message: x, foo: 1 }'),
    'tasks[0].foo', 'unknown property `foo` for task type core.log.Log'],
  ['duplicate task id', withTasks(log('a') + log('a')), 'tasks[1].id', 'duplicate task id `a` (also used at tasks[0])'],
  ['duplicate id in errors', withTasks(log('a'), `errors:\n${log('a')}`), 'errors[0].id', 'duplicate task id `a`'],
  // Retry
  ['retry without type', one('{ id: a, type: ai.service.plugin.core.log.Log, message: x, retry: { maxAttempt: 2 } }'), 'tasks[0].retry.type', 'required'],
  ['retry bad type', one('{ id: a, type: ai.service.plugin.core.log.Log, message: x, retry: { type: linear, maxAttempt: 2 } }'), 'tasks[0].retry.type', 'not one of constant'],
  ['constant needs interval', one('{ id: a, type: ai.service.plugin.core.log.Log, message: x, retry: { type: constant, maxAttempt: 2 } }'),
    'tasks[0].retry.interval', 'required'],
  ['exponential needs maxInterval', one('{ id: a, type: ai.service.plugin.core.log.Log, message: x, retry: { type: exponential, interval: PT1S, maxAttempt: 2 } }'),
    'tasks[0].retry.maxInterval', 'required'],
  ['random needs minInterval', one('{ id: a, type: ai.service.plugin.core.log.Log, message: x, retry: { type: random, maxInterval: PT1S, maxAttempt: 2 } }'),
    'tasks[0].retry.minInterval', 'required'],
  ['retry maxAttempt 0', one('{ id: a, type: ai.service.plugin.core.log.Log, message: x, retry: { type: constant, interval: PT1S, maxAttempt: 0 } }'),
    'tasks[0].retry.maxAttempt', 'must be >= 1'],
  ['retry interval not ISO', one('{ id: a, type: ai.service.plugin.core.log.Log, message: x, retry: { type: constant, interval: 1s, maxAttempt: 2 } }'),
    'tasks[0].retry.interval', 'not an ISO 8601 duration'],
  ['retry without limit', one('{ id: a, type: ai.service.plugin.core.log.Log, message: x, retry: { type: constant, interval: PT1S } }'),
    'tasks[0].retry', 'maxAttempt` or `maxDuration'],
  // Flowable tasks
  ['Sequential without tasks', one('{ id: s, type: ai.service.plugin.core.flow.Sequential }'), 'tasks[0].tasks', 'required'],
  ['Sequential empty tasks', one('{ id: s, type: ai.service.plugin.core.flow.Sequential, tasks: [] }'), 'tasks[0].tasks', 'must not be empty'],
  ['nested invalid task', one('{ id: s, type: ai.service.plugin.core.flow.Sequential, tasks: [{ id: x, type: ai.service.plugin.core.log.Log }] }'),
    'tasks[0].tasks[0].message', 'required'],
  ['Parallel concurrent negative', one(`{ id: p, type: ai.service.plugin.core.flow.Parallel, concurrent: -1, tasks: [${log('x').trim().slice(2)}] }`),
    'tasks[0].concurrent', 'must be >= 0'],
  ['Parallel concurrent text', one(`{ id: p, type: ai.service.plugin.core.flow.Parallel, concurrent: many, tasks: [${log('x').trim().slice(2)}] }`),
    'tasks[0].concurrent', 'must be an integer or a template expression'],
  ['Switch without value', one('{ id: s, type: ai.service.plugin.core.flow.Switch, cases: {} }'), 'tasks[0].value', 'required'],
  ['Switch case not a list', one('{ id: s, type: ai.service.plugin.core.flow.Switch, value: x, cases: { A: 1 } }'), 'tasks[0].cases.A', 'must be a list'],
  ['Switch case invalid task', one('{ id: s, type: ai.service.plugin.core.flow.Switch, value: x, cases: { "a b": [{ id: y, type: nope }] } }'),
    'tasks[0].cases["a b"][0].type', 'Unknown task type'],
  ['If without then', one('{ id: i, type: ai.service.plugin.core.flow.If, condition: "{{ true }}" }'), 'tasks[0].then', 'required'],
  ['If without condition', one(`{ id: i, type: ai.service.plugin.core.flow.If, then: [${log('x').trim().slice(2)}] }`), 'tasks[0].condition', 'required'],
  ['EachSequential value map', one(`{ id: e, type: ai.service.plugin.core.flow.EachSequential, value: { a: 1 }, tasks: [${log('x').trim().slice(2)}] }`),
    'tasks[0].value', 'must be a list or a string'],
  ['EachParallel without value', one(`{ id: e, type: ai.service.plugin.core.flow.EachParallel, tasks: [${log('x').trim().slice(2)}] }`), 'tasks[0].value', 'required'],
  ['ForEachItem without items', one('{ id: e, type: ai.service.plugin.core.flow.ForEachItem, namespace: n, flowId: c }'), 'tasks[0].items', 'required'],
  ['ForEachItem batch unknown', one('{ id: e, type: ai.service.plugin.core.flow.ForEachItem, items: x, namespace: n, flowId: c, batch: { lines: 2 } }'),
    'tasks[0].batch.lines', 'unknown property'],
  ['Subflow without flowId', one('{ id: s, type: ai.service.plugin.core.flow.Subflow, namespace: n }'), 'tasks[0].flowId', 'required'],
  ['Subflow outputs not a map', one('{ id: s, type: ai.service.plugin.core.flow.Subflow, namespace: n, flowId: c, outputs: [a] }'), 'tasks[0].outputs', 'must be a map'],
  ['ForEachItem outputs (only Subflow had the deprecated mapping)', one('{ id: e, type: ai.service.plugin.core.flow.ForEachItem, items: x, namespace: n, flowId: c, outputs: { a: b } }'),
    'tasks[0].outputs', 'unknown property'],
  ['Subflow revision 0', one('{ id: s, type: ai.service.plugin.core.flow.Subflow, namespace: n, flowId: c, revision: 0 }'), 'tasks[0].revision', '>= 1'],
  ['Subflow calling its own flow', one('{ id: s, type: ai.service.plugin.core.flow.Subflow, namespace: company.team, flowId: f }'),
    'tasks[0].flowId', 'a flow cannot call itself (company.team.f)'],
  ['Kestra Subflow calling its own flow', one('{ id: s, type: io.kestra.plugin.core.flow.Subflow, namespace: company.team, flowId: f, wait: true }'),
    'tasks[0].flowId', 'a flow cannot call itself'],
  ['nested ForEachItem calling its own flow', one(`{ id: seq, type: ai.service.plugin.core.flow.Sequential, tasks: [
      { id: e, type: ai.service.plugin.core.flow.ForEachItem, items: x, namespace: company.team, flowId: f }] }`),
    'tasks[0].tasks[0].flowId', 'a flow cannot call itself'],
  // retry, allowWarning, runIf and workerGroup on any task (semantic-task-props.ts)
  ['retry on Pause', one('{ id: p, type: ai.service.plugin.core.flow.Pause, pauseDuration: PT1S, retry: { type: constant, interval: PT1S, maxAttempt: 2 } }'),
    'tasks[0].retry', 'not supported on Pause'],
  ['retry on a flowable with nothing to retry', one(`{ id: seq, type: ai.service.plugin.core.flow.Sequential, retry: { type: constant, interval: PT1S, maxAttempt: 2 },
      tasks: [{ id: p, type: ai.service.plugin.core.flow.Pause, pauseDuration: PT1S }] }`),
    'tasks[0].retry', '`seq` contains none that can be retried'],
  ['allowWarning not boolean', one('{ id: a, type: ai.service.plugin.core.log.Log, message: x, allowWarning: "yes" }'), 'tasks[0].allowWarning', 'must be a boolean'],
  ['runIf not a string', one('{ id: a, type: ai.service.plugin.core.log.Log, message: x, runIf: [1] }'), 'tasks[0].runIf', 'must be'],
  ['workerGroup on a task', one('{ id: a, type: ai.service.plugin.core.log.Log, message: x, workerGroup: { key: gpu } }'),
    'tasks[0].workerGroup', '`workerGroup` is not supported'],
  ['workerGroup on a nested task', one(`{ id: seq, type: io.kestra.plugin.core.flow.Sequential, tasks: [
      { id: a, type: io.kestra.plugin.core.log.Log, message: x, workerGroup: { key: gpu, fallback: WAIT } }] }`),
    'tasks[0].tasks[0].workerGroup', 'single pool of workers'],
  ['workerGroup on a trigger', withTasks(log(), 'triggers:\n  - { id: t, type: io.kestra.plugin.core.trigger.Schedule, cron: "* * * * *", workerGroup: { key: gpu } }\n'),
    'triggers[0].workerGroup', '`workerGroup` is not supported'],
  ['AllowFailure without tasks', one('{ id: a, type: ai.service.plugin.core.flow.AllowFailure }'), 'tasks[0].tasks', 'required'],
  ['Fail unknown property', one('{ id: a, type: ai.service.plugin.core.execution.Fail, message: x }'), 'tasks[0].message', 'unknown property'],
  ['WorkingDirectory outputFiles', one(`{ id: w, type: ai.service.plugin.core.flow.WorkingDirectory, outputFiles: a, tasks: [${log('x').trim().slice(2)}] }`),
    'tasks[0].outputFiles', 'must be a list'],
  ['WorkingDirectory outputFiles (not collected)', one(`{ id: w, type: ai.service.plugin.core.flow.WorkingDirectory, outputFiles: [a.txt], tasks: [${log('x').trim().slice(2)}] }`),
    'tasks[0].outputFiles', 'not supported'],
  ['ForEach without values', one(`{ id: e, type: ai.service.plugin.core.flow.ForEach, tasks: [${log('x').trim().slice(2)}] }`), 'tasks[0].values', 'required'],
  ['ForEach with EachSequential\'s value', one(`{ id: e, type: ai.service.plugin.core.flow.ForEach, value: [a], values: [a], tasks: [${log('x').trim().slice(2)}] }`), 'tasks[0].value', 'unknown property'],
  ['ForEach negative concurrencyLimit', one(`{ id: e, type: ai.service.plugin.core.flow.ForEach, values: [a], concurrencyLimit: -1, tasks: [${log('x').trim().slice(2)}] }`), 'tasks[0].concurrencyLimit', '>= 0'],
  ['LoopUntil without condition', one(`{ id: l, type: ai.service.plugin.core.flow.LoopUntil, tasks: [${log('x').trim().slice(2)}] }`), 'tasks[0].condition', 'required'],
  ['LoopUntil unknown checkFrequency key', one(`{ id: l, type: ai.service.plugin.core.flow.LoopUntil, condition: x, checkFrequency: { every: PT1S }, tasks: [${log('x').trim().slice(2)}] }`), 'tasks[0].checkFrequency.every', 'unknown property'],
  ['LoopUntil maxIterations 0', one(`{ id: l, type: ai.service.plugin.core.flow.LoopUntil, condition: x, checkFrequency: { maxIterations: 0 }, tasks: [${log('x').trim().slice(2)}] }`), 'tasks[0].checkFrequency.maxIterations', '>= 1'],
  ['LoopUntil interval not ISO', one(`{ id: l, type: ai.service.plugin.core.flow.LoopUntil, condition: x, checkFrequency: { interval: 5 }, tasks: [${log('x').trim().slice(2)}] }`), 'tasks[0].checkFrequency.interval', 'ISO 8601 duration'],
  ['Exit state', one('{ id: x, type: ai.service.plugin.core.execution.Exit, state: DONE }'), 'tasks[0].state', '`DONE` is not one of SUCCESS, WARNING, KILLED, FAILED, CANCELED, CANCELLED (or a template expression)'],
  ['Pause delay not ISO', one('{ id: p, type: ai.service.plugin.core.flow.Pause, delay: 10 }'), 'tasks[0].delay', 'must be an ISO 8601 duration (e.g. PT5S), got `10`'],
  ['Pause behavior', one('{ id: p, type: ai.service.plugin.core.flow.Pause, pauseDuration: PT1S, behavior: STOP }'), 'tasks[0].behavior', 'not one of RESUME'],
  ['Pause onResume input', one('{ id: p, type: ai.service.plugin.core.flow.Pause, onResume: [{ id: ok, type: BOOLEAN, defaults: maybe }] }'),
    'tasks[0].onResume[0].defaults', 'not a boolean'],
  ['DAG unknown dependency', one('{ id: d, type: ai.service.plugin.core.flow.DAG, tasks: [{ task: { id: a, type: ai.service.plugin.core.log.Log, message: x }, dependsOn: [zz] }] }'),
    'tasks[0].tasks[0].dependsOn[0]', 'unknown task `zz`'],
  ['DAG cycle', one(`{ id: d, type: ai.service.plugin.core.flow.DAG, tasks: [
      { task: { id: a, type: ai.service.plugin.core.log.Log, message: x }, dependsOn: [b] },
      { task: { id: b, type: ai.service.plugin.core.log.Log, message: x }, dependsOn: [a] }] }`),
    'tasks[0].tasks', 'dependency cycle: a → b → a'],
  ['DAG entry without task', one('{ id: d, type: ai.service.plugin.core.flow.DAG, tasks: [{ dependsOn: [] }] }'), 'tasks[0].tasks[0].task', 'required'],
  ['DAG nested invalid task', one('{ id: d, type: ai.service.plugin.core.flow.DAG, tasks: [{ task: { id: a, type: ai.service.plugin.core.log.Log } }] }'),
    'tasks[0].tasks[0].task.message', 'required'],
  // Runnable tasks
  ['Request without uri', one('{ id: r, type: ai.service.plugin.core.http.Request }'), 'tasks[0].uri', 'required property `uri`'],
  ['Request bad method', one('{ id: r, type: ai.service.plugin.core.http.Request, uri: x, method: FETCH }'), 'tasks[0].method', 'not one of GET'],
  ['Request headers not map', one('{ id: r, type: ai.service.plugin.core.http.Request, uri: x, headers: [a] }'), 'tasks[0].headers', 'must be a map'],
  ['Download without uri', one('{ id: r, type: ai.service.plugin.core.http.Download }'), 'tasks[0].uri', 'required'],
  ['Log message number list', one('{ id: l, type: ai.service.plugin.core.log.Log, message: [1] }'), 'tasks[0].message[0]', 'must be a string'],
  ['Log bad level', one('{ id: l, type: ai.service.plugin.core.log.Log, message: x, level: LOUD }'), 'tasks[0].level', 'not one of'],
  ['Labels without labels', one('{ id: l, type: ai.service.plugin.core.execution.Labels }'), 'tasks[0].labels', 'required'],
  ['KV Set without value', one('{ id: k, type: ai.service.plugin.core.kv.Set, key: a }'), 'tasks[0].value', 'required'],
  ['KV Set ttl', one('{ id: k, type: ai.service.plugin.core.kv.Set, key: a, value: 1, ttl: 1d }'), 'tasks[0].ttl', 'not an ISO 8601 duration'],
  ['KV Set kvType', one('{ id: k, type: ai.service.plugin.core.kv.Set, key: a, value: 1, kvType: BLOB }'), 'tasks[0].kvType', 'not one of'],
  ['KV Get without key', one('{ id: k, type: ai.service.plugin.core.kv.Get }'), 'tasks[0].key', 'required'],
  ['KV Delete errorOnMissing', one('{ id: k, type: ai.service.plugin.core.kv.Delete, key: a, errorOnMissing: sometimes }'),
    'tasks[0].errorOnMissing', 'must be a boolean or a template expression'],
  ['TemplatedTask without spec', one('{ id: t, type: ai.service.plugin.core.templating.TemplatedTask }'), 'tasks[0].spec', 'required'],
  ['shell Script without script', one('{ id: s, type: ai.service.plugin.scripts.shell.Script }'), 'tasks[0].script', 'required'],
  ['shell Commands without commands', one('{ id: s, type: ai.service.plugin.scripts.shell.Commands }'), 'tasks[0].commands', 'required'],
  ['python Script unknown property', one('{ id: s, type: ai.service.plugin.scripts.python.Script, script: x, requirements: [a] }'),
    'tasks[0].requirements', 'unknown property `requirements` for task type scripts.python.Script'],
  ['runner without type', one('{ id: s, type: ai.service.plugin.scripts.shell.Commands, commands: [ls], taskRunner: {} }'),
    'tasks[0].taskRunner.type', 'required'],
  ['runner unknown type', one('{ id: s, type: ai.service.plugin.scripts.shell.Commands, commands: [ls], taskRunner: { type: k8s } }'),
    'tasks[0].taskRunner.type', 'Unknown task runner type'],
  ['docker pullPolicy', one('{ id: s, type: ai.service.plugin.scripts.shell.Commands, commands: [ls], taskRunner: { type: ai.service.plugin.scripts.runner.docker.Docker, pullPolicy: SOMETIMES } }'),
    'tasks[0].taskRunner.pullPolicy', 'not one of ALWAYS'],
  ['process runner property', one('{ id: s, type: ai.service.plugin.scripts.shell.Commands, commands: [ls], taskRunner: { type: io.kestra.plugin.core.runner.Process, containerImage: x } }'),
    'tasks[0].taskRunner.containerImage', 'unknown property'],
  ['env not a map', one('{ id: s, type: ai.service.plugin.scripts.shell.Commands, commands: [ls], env: [A] }'), 'tasks[0].env', 'must be a map'],
  // Inputs
  ['input without type', withTasks(log(), 'inputs: [{ id: a }]\n'), 'inputs[0].type', 'required'],
  ['input bad type', withTasks(log(), 'inputs: [{ id: a, type: TEXT }]\n'), 'inputs[0].type', 'not one of STRING'],
  ['Labels given plain text', one('{ id: lb, type: ai.service.plugin.core.execution.Labels, labels: "env=prod" }'), 'tasks[0].labels', 'must'],
  ['input name and id differ', withTasks(log(), 'inputs: [{ id: a, name: b, type: STRING }]\n'), 'inputs[0].name', 'former spelling of `id`'],
  ['input bad id', withTasks(log(), 'inputs: [{ id: "a b", type: STRING }]\n'), 'inputs[0].id', 'not a valid id'],
  ['duplicate input', withTasks(log(), 'inputs: [{ id: a, type: STRING }, { id: a, type: INT }]\n'), 'inputs[1].id', 'duplicate input id `a`'],
  ['ENUM without values', withTasks(log(), 'inputs: [{ id: a, type: ENUM }]\n'), 'inputs[0].values', 'required'],
  ['ARRAY without itemType', withTasks(log(), 'inputs: [{ id: a, type: ARRAY }]\n'), 'inputs[0].itemType', 'required'],
  ['FILE with defaults', withTasks(log(), 'inputs: [{ id: a, type: FILE, defaults: "kestra:///x" }]\n'), 'inputs[0].defaults', 'FILE inputs do not support defaults'],
  ['min on STRING', withTasks(log(), 'inputs: [{ id: a, type: STRING, min: 1 }]\n'), 'inputs[0].min', 'only allowed on INT'],
  ['max not a DATE', withTasks(log(), 'inputs: [{ id: a, type: DATE, max: tomorrow }]\n'), 'inputs[0].max', 'not a valid DATE'],
  ['validator on INT', withTasks(log(), 'inputs: [{ id: a, type: INT, validator: "\\\\d+" }]\n'), 'inputs[0].validator', 'only allowed on STRING'],
  ['validator not a regex', withTasks(log(), 'inputs: [{ id: a, type: STRING, validator: "([a-z" }]\n'), 'inputs[0].validator', 'not a valid regular expression'],
  ['validator with lookahead', withTasks(log(), 'inputs: [{ id: a, type: STRING, validator: "(?=a)b" }]\n'), 'inputs[0].validator',
    '`(?=a)b` is not a valid regular expression: invalid or unsupported Perl syntax: `(?=` (regular expressions use RE2 syntax (linear time): lookaround and backreferences are not supported)'],
  ['validator with a backreference', withTasks(log(), 'inputs: [{ id: a, type: STRING, validator: "(a)\\\\1" }]\n'), 'inputs[0].validator', 'lookaround and backreferences are not supported'],
  ['INT defaults not int', withTasks(log(), 'inputs: [{ id: a, type: INT, defaults: abc }]\n'), 'inputs[0].defaults', 'not an integer'],
  ['ENUM defaults not a value', withTasks(log(), 'inputs: [{ id: a, type: ENUM, values: [A, B], defaults: C }]\n'), 'inputs[0].defaults', 'not one of A, B'],
  ['STRING defaults vs validator', withTasks(log(), 'inputs: [{ id: a, type: STRING, validator: "[a-z]+", defaults: ABC }]\n'), 'inputs[0].defaults', 'does not match the validator'],
  ['INT defaults above max', withTasks(log(), 'inputs: [{ id: a, type: INT, max: 5, defaults: 6 }]\n'), 'inputs[0].defaults', 'greater than the maximum'],
  ['input unknown field', withTasks(log(), 'inputs: [{ id: a, type: STRING, title: x }]\n'), 'inputs[0].title', 'unknown property'],
  // Outputs
  ['output without value', withTasks(log(), 'outputs: [{ id: o, type: STRING }]\n'), 'outputs[0].value', 'required'],
  ['output bad type', withTasks(log(), 'outputs: [{ id: o, type: TEXT, value: x }]\n'), 'outputs[0].type', 'not one of'],
  ['duplicate output', withTasks(log(), 'outputs: [{ id: o, type: STRING, value: x }, { id: o, type: STRING, value: y }]\n'),
    'outputs[1].id', 'duplicate output id'],
  // Triggers
  ['trigger without id', withTasks(log(), 'triggers: [{ type: ai.service.plugin.core.trigger.Schedule, cron: "@daily" }]\n'), 'triggers[0].id', 'required'],
  ['schedule without cron', withTasks(log(), 'triggers: [{ id: s, type: ai.service.plugin.core.trigger.Schedule }]\n'), 'triggers[0].cron', 'required'],
  ['schedule unknown property', withTasks(log(), 'triggers: [{ id: s, type: ai.service.plugin.core.trigger.Schedule, cron: "@daily", every: 1 }]\n'),
    'triggers[0].every', 'unknown property'],
  ['schedule recoverMissedSchedules', withTasks(log(), 'triggers: [{ id: s, type: ai.service.plugin.core.trigger.Schedule, cron: "@daily", recoverMissedSchedules: SOME }]\n'),
    'triggers[0].recoverMissedSchedules', 'not one of ALL'],
  ['schedule bad cron', withTasks(log(), 'triggers: [{ id: s, type: ai.service.plugin.core.trigger.Schedule, cron: "61 * * * *" }]\n'),
    'triggers[0].cron', 'not a valid cron expression'],
  ['schedule cron field count', withTasks(log(), 'triggers: [{ id: s, type: ai.service.plugin.core.trigger.Schedule, cron: "* * * *" }]\n'),
    'triggers[0].cron', 'expected 5 fields, got 4'],
  ['schedule seconds need withSeconds', withTasks(log(), 'triggers: [{ id: s, type: ai.service.plugin.core.trigger.Schedule, cron: "0 * * * * *" }]\n'),
    'triggers[0].cron', 'expected 5 fields, got 6'],
  ['schedule timezone', withTasks(log(), 'triggers: [{ id: s, type: ai.service.plugin.core.trigger.Schedule, cron: "@daily", timezone: Mars/Olympus }]\n'),
    'triggers[0].timezone', 'not a known time zone'],
  ['schedule backfill start', withTasks(log(), 'triggers: [{ id: s, type: ai.service.plugin.core.trigger.Schedule, cron: "@daily", backfill: { start: yesterday } }]\n'),
    'triggers[0].backfill.start', 'not an ISO 8601 date-time'],
  ['polling interval', withTasks(log(), 'triggers: [{ id: p, type: ai.service.plugin.jdbc.postgresql.Trigger, interval: 1m }]\n'),
    'triggers[0].interval', 'not an ISO 8601 duration'],
  ['multiple condition window', withTasks(log(), `triggers: [{ id: t, type: ai.service.plugin.core.trigger.Flow, conditions: [
      { type: io.kestra.plugin.core.condition.MultipleCondition, window: 1 day, conditions: { a: { type: io.kestra.plugin.core.condition.ExecutionFlowCondition, namespace: n, flowId: x } } }] }]\n`),
    'triggers[0].conditions[0].window', 'not an ISO 8601 duration'],
  ['webhook without key', withTasks(log(), 'triggers: [{ id: w, type: io.kestra.plugin.core.trigger.Webhook }]\n'), 'triggers[0].key', 'required'],
  ['unknown trigger type', withTasks(log(), 'triggers: [{ id: w, type: com.acme.Trigger }]\n'), 'triggers[0].type', 'Unknown trigger type'],
  ['duplicate trigger id', withTasks(log(), 'triggers: [{ id: w, type: ai.service.plugin.core.trigger.Webhook, key: k }, { id: w, type: ai.service.plugin.core.trigger.Webhook, key: j }]\n'),
    'triggers[1].id', 'duplicate trigger id'],
  ['unknown condition type', withTasks(log(), 'triggers: [{ id: t, type: ai.service.plugin.core.trigger.Flow, conditions: [{ type: nope }] }]\n'),
    'triggers[0].conditions[0].type', 'Unknown condition type'],
  ['trigger disabled not boolean', withTasks(log(), 'triggers: [{ id: t, type: ai.service.plugin.core.trigger.Flow, disabled: "no way" }]\n'),
    'triggers[0].disabled', 'must be a boolean'],
  // Templates, checked at save
  ['template syntax error', one('{ id: a, type: ai.service.plugin.core.log.Log, message: "{{ 1 + }}" }'), 'tasks[0].message', 'Invalid expression in `{{ 1 + }}`'],
  ['unknown filter', one('{ id: a, type: ai.service.plugin.core.log.Log, message: "{{ x | nosuchfilter }}" }'), 'tasks[0].message', 'unknown filter `nosuchfilter`'],
  ['unknown function', one('{ id: a, type: ai.service.plugin.core.log.Log, message: "{{ nosuchfn() }}" }'), 'tasks[0].message', 'unknown function `nosuchfn`'],
  ['unknown test', one('{ id: a, type: ai.service.plugin.core.log.Log, message: "{{ x is nosuchtest }}" }'), 'tasks[0].message', 'unknown test `nosuchtest`'],
  ['sandbox escape', one(`{ id: a, type: ai.service.plugin.core.debug.Return, format: "{{ range.constructor('return process')() }}" }`),
    'tasks[0].format', 'Only named functions can be called'],
  ['invalid literal regex', one(`{ id: a, type: ai.service.plugin.core.log.Log, message: "{{ x | replace('a(?=b)', 'c', true) }}" }`),
    'tasks[0].message', 'invalid regular expression `a(?=b)`'],
  ['template in a nested task', one(`{ id: s, type: ai.service.plugin.core.flow.Sequential, tasks: [{ id: x, type: ai.service.plugin.core.log.Log, message: "{{ x | nope }}" }] }`),
    'tasks[0].tasks[0].message', 'unknown filter `nope`'],
  ['template deep in a property', one('{ id: r, type: ai.service.plugin.core.http.Request, uri: x, headers: { X-A: "{{ nosuchfn() }}" } }'),
    'tasks[0].headers.X-A', 'unknown function `nosuchfn`'],
  ['template in a map key', one('{ id: r, type: ai.service.plugin.core.http.Request, uri: x, headers: { "{{ k | nope }}": v } }'),
    'tasks[0].headers["{{ k | nope }}"]', 'unknown filter `nope`'],
  ['template in an If condition', one(`{ id: i, type: ai.service.plugin.core.flow.If, condition: "{{ x is nosuchtest }}", then: [${log('x').trim().slice(2)}] }`),
    'tasks[0].condition', 'unknown test `nosuchtest`'],
  ['template in a flow output', withTasks(log(), 'outputs: [{ id: o, type: STRING, value: "{{ 1 + }}" }]\n'), 'outputs[0].value', 'Invalid expression'],
  ['template in variables', withTasks(log(), 'variables: { a: { b: "{{ x | nosuchfilter }}" } }\n'), 'variables.a.b', 'unknown filter `nosuchfilter`'],
  ['template in labels', withTasks(log(), 'labels: { team: "{{ nosuchfn() }}" }\n'), 'labels.team', 'unknown function `nosuchfn`'],
  ['template in an input default', withTasks(log(), 'inputs: [{ id: a, type: STRING, defaults: "{{ nosuchfn() }}" }]\n'), 'inputs[0].defaults', 'unknown function `nosuchfn`'],
  ['template in trigger inputs', withTasks(log(), 'triggers: [{ id: s, type: ai.service.plugin.core.trigger.Schedule, cron: "@daily", inputs: { a: "{{ x | nope }}" } }]\n'),
    'triggers[0].inputs.a', 'unknown filter `nope`'],
  ['template in plugin defaults', withTasks(log(), 'pluginDefaults: [{ type: ai.service.plugin.core.log.Log, values: { level: "{{ nosuchfn() }}" } }]\n'),
    'pluginDefaults[0].values.level', 'unknown function `nosuchfn`'],
  // Plugin defaults interplay
  ['forced default with bad value', withTasks(log(), 'pluginDefaults: [{ type: ai.service.plugin.core.log.Log, forced: true, values: { level: LOUD } }]\n'),
    'tasks[0].level', 'not one of'],
];

describe('invalid flows', () => {
  it.each(CASES)('%s → %s', (_name, source, path, reason) => {
    const issues = issuesOf(source);
    const atPath = issues.filter((i) => i.path === path);
    expect(atPath.map((i) => i.message).join(' | ') || JSON.stringify(issues)).toContain(reason);
  });
});

describe('error reporting', () => {
  it('reports YAML syntax errors with path "" and line/column', () => {
    const issues = issuesOf('id: f\nnamespace: n\ntasks:\n  - id: a\n    type: [unclosed\n');
    expect(issues[0].path).toBe('');
    expect(issues[0].message).toMatch(/^Invalid YAML: .*at line \d+, column \d+$/);
  });

  it('rejects YAML alias bombs as invalid YAML', () => {
    const lines = ['a: &a ["x","x","x","x","x","x","x","x","x","x"]'];
    for (let i = 1; i < 8; i++) lines.push(`${String.fromCharCode(97 + i)}: &${String.fromCharCode(97 + i)} [${Array(10).fill(`*${String.fromCharCode(96 + i)}`).join(',')}]`);
    const issues = issuesOf(`id: f\nnamespace: n\nvariables:\n${lines.map((l) => `  ${l}`).join('\n')}\ntasks: []\n`);
    expect(issues[0]).toMatchObject({ path: '' });
    expect(issues[0].message).toMatch(/^Invalid YAML: .*alias/i);
  });

  it('rejects duplicate YAML keys', () => {
    expect(issuesOf('id: f\nid: g\nnamespace: n\ntasks: []\n')[0].message).toMatch(/unique/i);
  });

  it.each(['', '- a\n- b\n', 'just a string'])('rejects a document that is not a map: %j', (src) => {
    expect(issuesOf(src)[0]).toMatchObject({ path: '' });
  });

  it('summarizes the first field in the message and keeps every issue', () => {
    try {
      parseFlow(`${head}tasks:\n  - { id: a, type: ai.service.plugin.core.log.Log, message: x, timeout: 5 seconds }\n  - { id: b, type: nope }\n`);
      expect.unreachable();
    } catch (err) {
      const e = err as FlowValidationError;
      expect(e).toBeInstanceOf(FlowValidationError);
      expect(e.message).toBe('Invalid flow: tasks[0].timeout: `5 seconds` is not an ISO 8601 duration (e.g. PT5S) (and 1 more error)');
      expect(e.errors).toEqual([
        { path: 'tasks[0].timeout', message: '`5 seconds` is not an ISO 8601 duration (e.g. PT5S)' },
        { path: 'tasks[1].type', message: 'Unknown task type `nope`' },
      ]);
    }
  });

  it('accepts templates in duration fields and templatable numbers', () => {
    expect(() => parseFlow(`${head}tasks:\n  - { id: a, type: ai.service.plugin.core.flow.Pause, delay: "{{ inputs.d }}" }\n`)).not.toThrow();
  });
});
