// Public entry of the flow model layer: parsing and validating flows, task type names and traversal,
// plugin defaults, ISO 8601 durations, and execution input resolution. Pure code, no I/O.
export { FlowValidationError, InputValidationError, formatIssue, type ValidationIssue } from './errors.js';
export { parseFlow, prepareFlowValidation, validateFlow, validateTask } from './flow.js';
export { flowJsonSchema } from './schema-flow.js';
export { flowCrdSchema, toStructural } from './crd-schema.js';
export {
  normalizeType, taskTypeInfo, taskTypes, FLOWABLE_TYPES, runnableTaskTypes, TASK_RUNNER_TYPES, TRIGGER_TYPES,
  CONDITION_TYPES, PREFIX, type TaskKind,
} from './task-types.js';
export { childTaskLists, allTasks, locateAllTasks, type LocatedTask } from './traverse.js';
export { applyFlowDefaults, applyPluginDefaults } from './plugin-defaults.js';
export {
  boolProp, flowWarnings, type FlowWarnings, LISTENERS_DEPRECATED, SUBFLOW_OUTPUTS_DEPRECATED, SUBFLOW_OUTPUTS_WITHOUT_WAIT, TRANSMIT_WITHOUT_WAIT,
} from './warnings.js';
export { withWrittenTypes } from './written-types.js';
export { isNamespaceId, namespaceChain, namespaceContextOf, namespaceTree, validateNamespace, withNamespaceContext } from './namespaces.js';
export { reservedNameIssues } from './semantic-keys.js';
export { parseDuration, isDuration, formatDuration } from './duration.js';
export { resolveInputs, type ResolveOptions } from './inputs.js';
export { coerceInputValue } from './input-coerce.js';
