// Reusable JSON Schema (draft-07) fragments of the flow schema: ids, durations, templatable scalars, retry,
// labels and the properties every task shares. Plain JSON Schema; `format`s are checked by formats.ts.
import { LogLevels } from '../core/types.js';
import { tag } from './schema-roles.js';

export type Schema = Record<string, unknown>;

export const ref = (name: string): Schema => ({ $ref: `#/definitions/${name}` });

export const FLOW_ID_PATTERN = '^[a-zA-Z0-9][a-zA-Z0-9._-]*$';
export const NAMESPACE_PATTERN = '^[a-z0-9][a-z0-9._-]*$';
export const TASK_ID_PATTERN = '^[a-zA-Z0-9][a-zA-Z0-9_-]*$';
export const INPUT_ID_PATTERN = '^[a-zA-Z0-9][a-zA-Z0-9._-]*$';

export const STRING: Schema = { type: 'string' };
export const SCALAR: Schema = { type: ['string', 'number', 'boolean'] };
export const ANY: Schema = {};
export const OBJECT: Schema = { type: 'object' };
export const STRING_LIST: Schema = { type: 'array', items: STRING };
/** A list of strings, or a template expression yielding one. */
export const STRING_LIST_OR_EXPR: Schema = { type: ['array', 'string'], items: STRING };
export const SCALAR_MAP: Schema = { type: 'object', additionalProperties: SCALAR };

/** ISO 8601 duration, or a `{{ }}` template rendered later. */
export const DURATION: Schema = { type: 'string', format: 'iso-duration' };

/** Number/boolean properties that are dynamic: the native value or a template string. */
export const tplInt = (minimum?: number): Schema =>
  ({ type: ['integer', 'string'], format: 'template', ...(minimum !== undefined ? { minimum } : {}) });
export const TPL_NUMBER: Schema = { type: ['number', 'string'], format: 'template' };
export const TPL_BOOL: Schema = { type: ['boolean', 'string'], format: 'template' };
export const BOOL: Schema = { type: 'boolean' };

export const LOG_LEVEL: Schema = { type: 'string', enum: [...LogLevels] };

export const labelSchema: Schema = {
  type: 'object',
  required: ['key', 'value'],
  properties: { key: STRING, value: SCALAR },
  additionalProperties: false,
};
/** Labels: a map key → value, or a list of {key, value}. */
export const LABELS: Schema = { type: ['object', 'array'], additionalProperties: SCALAR, items: ref('label') };

const RETRY_FIELDS: Schema = {
  type: { type: 'string', enum: ['constant', 'exponential', 'random'] },
  interval: DURATION,
  maxInterval: DURATION,
  minInterval: DURATION,
  delayFactor: { type: 'number' },
  maxAttempt: { type: 'integer', minimum: 1 },
  maxDuration: DURATION,
  warningOnRetry: BOOL,
};

const needs = (type: string, fields: string[]): Schema =>
  ({ if: { properties: { type: { const: type } }, required: ['type'] }, then: { required: fields } });

function retrySchema(extra: Schema): Schema {
  return {
    type: 'object',
    required: ['type'],
    properties: { ...RETRY_FIELDS, ...extra },
    additionalProperties: false,
    allOf: [needs('constant', ['interval']), needs('exponential', ['interval', 'maxInterval']),
      needs('random', ['minInterval', 'maxInterval'])],
  };
}

/**
 * Retry behaviors, as Kestra: RETRY_FAILED_TASK retries the failed task in place (a task's default); CREATE_NEW_EXECUTION
 * retries the whole execution as a new one once it has ended (core/finish.ts), on a task as on the flow.
 */
const RETRY_BEHAVIOR: Schema = { type: 'string', enum: ['CREATE_NEW_EXECUTION', 'RETRY_FAILED_TASK'] };
export const taskRetrySchema = retrySchema({ behavior: RETRY_BEHAVIOR });
export const flowRetrySchema = retrySchema({ behavior: RETRY_BEHAVIOR });

/** Properties every task accepts. */
export const TASK_COMMON: Record<string, Schema> = {
  id: tag({ type: 'string', pattern: TASK_ID_PATTERN, maxLength: 256 }, { kind: 'id', dots: false }),
  type: STRING,
  description: STRING,
  retry: ref('taskRetry'),
  timeout: DURATION,
  disabled: BOOL,
  logLevel: LOG_LEVEL,
  allowFailure: BOOL,
  allowWarning: BOOL,
  /** Rendered when the run is created; false skips the task (runs.ts). */
  runIf: { type: ['string', 'boolean'] },
  logToFile: BOOL,
  /** Accepted by the schema so that semantic-task-props.ts refuses it with the reason. */
  workerGroup: ANY,
};

/** Files to write in a working directory: file name → content or `kestra:///` URI, or JSON text of such a map. */
export const FILES_MAP_OR_STRING: Schema = { type: ['object', 'string'], additionalProperties: STRING };

/** Kestra's NamespaceFiles: which namespace files a script or a WorkingDirectory gets in its working
 * directory (plugins/scripts/namespace-files.ts, controller/working-directory.ts). */
export const NAMESPACE_FILES: Schema = {
  type: 'object',
  properties: {
    enabled: TPL_BOOL,
    include: STRING_LIST_OR_EXPR,
    exclude: STRING_LIST_OR_EXPR,
    namespaces: STRING_LIST_OR_EXPR,
    ifExists: { type: 'string', enum: ['OVERWRITE', 'FAIL', 'WARN', 'IGNORE'] },
    folderPerNamespace: TPL_BOOL,
  },
  additionalProperties: false,
};

export const TASKS: Schema = ref('tasks');
export const TASKS_REQUIRED: Schema = { type: 'array', minItems: 1, items: ref('task') };

/** Schema of one task type: common properties plus its own; anything else is an unknown property. */
export function taskSchema(props: Record<string, Schema>, required: string[] = []): Schema {
  return {
    type: 'object',
    required: ['id', 'type', ...required],
    properties: { ...TASK_COMMON, ...props },
    additionalProperties: false,
  };
}
