// core.templating.TemplatedTask: renders `spec` (the YAML of another runnable task), parses it and runs that
// task with the same context; its result is the TemplatedTask's result.
import { parse } from 'yaml';
import type { Task } from '../core/types.js';
import { FlowValidationError, formatIssue, reservedNameIssues, validateTask } from '../model/index.js';
import type { RunContext, RunnablePlugin, TaskResult } from './types.js';
import { isRecord, plugin, requireString, TYPE_PREFIX } from './util.js';

export const TEMPLATED_TYPE = TYPE_PREFIX + 'core.templating.TemplatedTask';

/** Parses a rendered spec into a task definition, defaulting its id to the TemplatedTask's id. */
export function parseSpec(spec: string, templatedId: string): Task {
  let parsed: unknown;
  try {
    parsed = parse(spec);
  } catch (err) {
    throw new Error(`Invalid templated task spec: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (!isRecord(parsed)) throw new Error('Invalid templated task spec: expected a YAML map describing a task');
  if (typeof parsed.type !== 'string' || parsed.type === '') {
    throw new Error("Invalid templated task spec: missing 'type'");
  }
  // A task declared at run time meets the rule of tasks declared at save: no reserved name as a key or an id.
  const reserved = reservedNameIssues({ tasks: [parsed] })[0];
  if (reserved) throw new Error(`Invalid templated task spec: ${formatIssue({ ...reserved, path: reserved.path.replace(/^tasks\[0\]\.?/, '') })}`);
  const engineProps = ENGINE_PROPERTIES.filter((k) => parsed[k] !== undefined);
  if (engineProps.length) {
    throw new Error(`Invalid templated task spec: ${engineProps.map((k) => `\`${k}\``).join(', ')} cannot be honoured inside a rendered spec `
      + '(the engine applies it before the task runs, and the spec is known only when it runs); set it on the TemplatedTask itself');
  }
  const id = typeof parsed.id === 'string' && parsed.id !== '' ? parsed.id : templatedId;
  return { ...parsed, id, type: parsed.type };
}

/** The rule of a task declared at save: known properties only, of the right shapes (none accepted and ignored). */
function validSpec(task: Task): Task {
  try {
    return validateTask(task);
  } catch (err) {
    if (!(err instanceof FlowValidationError)) throw err;
    throw new Error(`Invalid templated task spec: ${err.errors.map(formatIssue).join('; ')}`);
  }
}

/**
 * Properties every task accepts that the engine applies around a run (attempts, deadline, skip, final state, log
 * level...): a rendered spec exists only inside the run, too late for them, so they are refused there by name.
 */
export const ENGINE_PROPERTIES = ['retry', 'timeout', 'runIf', 'allowWarning', 'allowFailure', 'disabled', 'logLevel', 'logToFile', 'workerGroup'] as const;

/** Builds the TemplatedTask plugin over a lookup of runnable plugins (given by the registry to avoid a cycle). */
export function makeTemplatedPlugin(lookup: (type: string) => RunnablePlugin | undefined): RunnablePlugin {
  return plugin('core.templating.TemplatedTask', async (ctx: RunContext): Promise<TaskResult> => {
    const spec = requireString(ctx, 'spec');
    const task = parseSpec(spec, ctx.task.id);
    const target = lookup(task.type);
    if (!target) {
      throw new Error(`The templated task type '${task.type}' is not a runnable task`);
    }
    if (target.type === TEMPLATED_TYPE) {
      throw new Error('The templated task cannot be of type TemplatedTask');
    }
    return target.run(withTask(ctx, validSpec(task)));
  });
}

/** The same context with another task definition (methods bound to the original, whatever its class). */
export function withTask(ctx: RunContext, task: Task): RunContext {
  return {
    flow: ctx.flow,
    execution: ctx.execution,
    taskRun: ctx.taskRun,
    task,
    attempt: ctx.attempt,
    render: (template, extra) => ctx.render(template, extra),
    renderValue: (value, extra) => ctx.renderValue(value, extra),
    renderTyped: (value, extra) => ctx.renderTyped(value, extra),
    variables: ctx.variables,
    logger: ctx.logger,
    storage: ctx.storage,
    kv: ctx.kv,
    namespaceFiles: ctx.namespaceFiles,
    logs: ctx.logs,
    executions: ctx.executions,
    storagePrefix: ctx.storagePrefix,
    get workingDir() { return ctx.workingDir; },
    signal: ctx.signal,
    secrets: ctx.secrets,
  };
}
