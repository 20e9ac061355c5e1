// Tests of canonical plugin type names, Kestra aliases and task kinds.
import { describe, expect, it } from 'vitest';
import { taskTypeSchemas } from './schema-tasks.js';
import { normalizeType, taskTypes, taskTypeInfo } from './task-types.js';

describe('normalizeType', () => {
  it.each([
    ['ai.service.plugin.core.log.Log', 'ai.service.plugin.core.log.Log'],
    ['io.kestra.plugin.core.log.Log', 'ai.service.plugin.core.log.Log'],
    ['io.kestra.core.tasks.log.Log', 'ai.service.plugin.core.log.Log'],
    ['io.kestra.core.tasks.flows.Sequential', 'ai.service.plugin.core.flow.Sequential'],
    ['io.kestra.core.tasks.flows.Flow', 'ai.service.plugin.core.flow.Subflow'],
    ['io.kestra.core.tasks.flows.Worker', 'ai.service.plugin.core.flow.WorkingDirectory'],
    ['io.kestra.plugin.core.flow.Dag', 'ai.service.plugin.core.flow.DAG'],
    ['io.kestra.core.tasks.debugs.Return', 'ai.service.plugin.core.debug.Return'],
    ['io.kestra.core.tasks.executions.Fail', 'ai.service.plugin.core.execution.Fail'],
    ['io.kestra.plugin.fs.http.Request', 'ai.service.plugin.core.http.Request'],
    ['io.kestra.plugin.scripts.shell.Commands', 'ai.service.plugin.scripts.shell.Commands'],
    ['io.kestra.plugin.scripts.runner.docker.Docker', 'ai.service.plugin.scripts.runner.docker.Docker'],
    ['io.kestra.plugin.core.runner.Process', 'ai.service.plugin.core.runner.Process'],
    ['io.kestra.core.models.triggers.types.Schedule', 'ai.service.plugin.core.trigger.Schedule'],
    ['io.kestra.plugin.core.trigger.Webhook', 'ai.service.plugin.core.trigger.Webhook'],
    ['io.kestra.core.models.conditions.types.ExecutionStatusCondition', 'ai.service.plugin.core.condition.ExecutionStatusCondition'],
    ['io.kestra.plugin.core.condition.ExecutionStatus', 'ai.service.plugin.core.condition.ExecutionStatusCondition'],
    ['io.kestra.plugin.jdbc.postgresql.Query', 'ai.service.plugin.jdbc.postgresql.Query'],
    ['io.kestra.plugin.scripts', 'ai.service.plugin.scripts'],
    ['com.example.Custom', 'com.example.Custom'],
  ])('%s → %s', (input, canonical) => expect(normalizeType(input)).toBe(canonical));
});

describe('taskTypeInfo', () => {
  it.each([
    ['io.kestra.plugin.core.flow.Parallel', 'ai.service.plugin.core.flow.Parallel', 'flowable'],
    ['ai.service.plugin.core.flow.Subflow', 'ai.service.plugin.core.flow.Subflow', 'flowable'],
    ['ai.service.plugin.core.execution.Fail', 'ai.service.plugin.core.execution.Fail', 'flowable'],
    ['ai.service.plugin.core.flow.Pause', 'ai.service.plugin.core.flow.Pause', 'flowable'],
    ['io.kestra.plugin.core.flow.ForEach', 'ai.service.plugin.core.flow.ForEach', 'flowable'],
    ['io.kestra.plugin.core.flow.LoopUntil', 'ai.service.plugin.core.flow.LoopUntil', 'flowable'],
    ['io.kestra.plugin.core.flow.WaitFor', 'ai.service.plugin.core.flow.LoopUntil', 'flowable'],
    ['io.kestra.core.tasks.flows.WaitFor', 'ai.service.plugin.core.flow.LoopUntil', 'flowable'],
    ['ai.service.plugin.core.flow.waitfor', 'ai.service.plugin.core.flow.LoopUntil', 'flowable'],
    ['io.kestra.plugin.core.execution.Exit', 'ai.service.plugin.core.execution.Exit', 'flowable'],
    ['io.kestra.plugin.core.http.Request', 'ai.service.plugin.core.http.Request', 'runnable'],
    ['ai.service.plugin.scripts.python.Script', 'ai.service.plugin.scripts.python.Script', 'runnable'],
  ])('%s', (input, type, kind) => expect(taskTypeInfo(input)).toEqual({ type, kind }));

  it.each(['ai.service.plugin.core.flow.ForEachItem$ForEachItemSplit', 'ai.service.plugin.core.trigger.Schedule', 'nope'])(
    '%s is not a task type', (t) => expect(taskTypeInfo(t)).toBeUndefined(),
  );
});

describe('type tables', () => {
  it('every known task type has a schema and vice versa', () => {
    expect(Object.keys(taskTypeSchemas()).sort()).toEqual([...taskTypes()].sort());
  });
});
