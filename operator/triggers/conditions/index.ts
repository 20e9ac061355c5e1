// Trigger conditions (`core.condition.*`): the evaluator the trigger service and the webhook route use, and the
// pure per-condition functions behind it.
export { FILTER_CONDITION, MULTIPLE_CONDITION, UPSTREAM_CONDITION, conditionName, conditionVariables, createConditionEvaluator, executionVariables } from './evaluator.js';
export { ConditionError, dateTimeBetween, dayWeek, dayWeekInMonth, parseDate, parseTime, timeBetween, weekend } from './dates.js';
export { executionFlow, executionLabels, executionNamespace, executionStatus } from '../../core/execution-conditions.js';
export { holidayRegionProblem, publicHoliday } from './holidays.js';
export { multipleStateId, recordMultiple, stepWindow, windowAt, type WindowSpec, type WindowState } from './multiple.js';
export { filterMatches, whereMatches, type ExecutionFilter } from './filters.js';
