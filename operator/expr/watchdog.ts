// Interrupts one long native-speed call (jq's WebAssembly, a regular expression over a large text, a large YAML
// parse) when the render's time budget runs out: node:vm's `timeout` terminates whatever JavaScript or WebAssembly
// runs inside the call on this thread, at ~50 µs per call, so only calls that may be long go through it.
import vm from 'node:vm';
import type { Budget } from './budget.js';

const slot: { run: (() => unknown) | null } = { run: null };
const context = vm.createContext(slot);
const call = new vm.Script('run()', { filename: 'expression-watchdog' });

/** True for the error node:vm throws when a `timeout` interrupted the call. */
export function isTimeout(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === 'ERR_SCRIPT_EXECUTION_TIMEOUT';
}

/** Runs `fn` with at most `ms` milliseconds; returns false if it was interrupted. */
export function runFor<T>(ms: number, fn: () => T): { done: true; value: T } | { done: false } {
  slot.run = fn;
  try {
    return { done: true, value: call.runInContext(context, { timeout: Math.max(1, Math.ceil(ms)) }) as T };
  } catch (error) {
    if (isTimeout(error)) return { done: false };
    throw error;
  } finally {
    slot.run = null;
  }
}

/** Runs `fn` within the render's remaining time, or throws the budget's time LimitError. */
export function withinBudget<T>(budget: Budget, fn: () => T, what?: string): T {
  const left = budget.remainingMs();
  if (left <= 0) throw budget.timeout(what);
  const result = runFor(left, fn);
  if (!result.done) throw budget.timeout(what);
  return result.value;
}
