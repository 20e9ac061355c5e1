// The names a template can call, defined once: functions, filters and tests, used by the interpreter and by the
// save-time check (check.ts), plus the few the interpreter handles itself.
import { DATA_FILTERS } from './filters-data.js';
import { TEXT_FILTERS } from './filters-text.js';
import type { FilterImpl, FunctionImpl, Registry, TestImpl } from './evaluate.js';
import { FILE_FUNCTIONS } from './functions-files.js';
import { FUNCTIONS, TESTS } from './functions.js';

function toMap<T>(record: Record<string, T>): Map<string, T> {
  return new Map(Object.entries(record));
}

export const REGISTRY: Registry = {
  functions: toMap<FunctionImpl>({ ...FUNCTIONS, ...FILE_FUNCTIONS }),
  filters: toMap<FilterImpl>({ ...TEXT_FILTERS, ...DATA_FILTERS }),
  tests: toMap<TestImpl>(TESTS),
};

/** Filters and tests the interpreter evaluates itself (they see missing values). */
export const BUILTIN_FILTERS: ReadonlySet<string> = new Set(['default']);
export const BUILTIN_TESTS: ReadonlySet<string> = new Set(['defined', 'null', 'none']);
