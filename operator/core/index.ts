// The engine core's public surface: pure functions over flows and executions.
export * from './types.js';
export * from './engine-types.js';
export { step, stepMany, advance, actsOnEnded } from './engine.js';
export { newExecution, replayExecution, mergeLabels, flowLabels, DISABLED_MESSAGE } from './execution.js';
export { buildVariables, buildOutputs, nestInputs } from './context.js';
export { pendingWork, type PendingWork, type Timer } from './work.js';
export { newId, derivedId } from './ids.js';
export { FLOWABLE, FOR_EACH_ITEM_SPLIT, FOR_EACH_ITEM_BATCH, FOR_EACH_ITEM_MERGE, isFlowableType, indexFlow } from './flow-index.js';
export { subflowSettings } from './subflow.js';
export { taskForRun } from './runs.js';
