// The spec of core.templating.TemplatedTask (templated.ts): the rendered YAML parsed into a task and validated by the
// flow model as a task declared at save. Loaded when a TemplatedTask runs (the plugin catalog may not import the model).
import { parse } from 'yaml';
import type { Task } from '../core/types.js';
import { FlowValidationError, formatIssue, reservedNameIssues, validateTask } from '../model/index.js';
import { isRecord } from './util.js';

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
export function validSpec(task: Task): Task {
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

