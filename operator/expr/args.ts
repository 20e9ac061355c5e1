// Argument helpers shared by filters and functions: positional-or-named arguments and type checks.
import { ExpressionError } from './errors.js';
import type { Kwargs } from './evaluate.js';
import { stringify, toNumber, typeName } from './values.js';

/** The argument at `index`, or the named argument `name` (Pebble allows both), or undefined. */
export function arg(args: unknown[], kwargs: Kwargs, index: number, name: string): unknown {
  if (index < args.length) return args[index];
  return Object.prototype.hasOwnProperty.call(kwargs, name) ? kwargs[name] : undefined;
}

export function str(value: unknown, what: string): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  throw new ExpressionError(`${what}: expected a string, got ${typeName(value)}`);
}

/** Like str() but also prints maps/lists as JSON (for filters that accept anything printable). */
export function text(value: unknown): string {
  return stringify(value);
}

export function int(value: unknown, what: string, fallback?: number): number {
  if ((value === undefined || value === null) && fallback !== undefined) return fallback;
  const n = toNumber(value, what);
  if (!Number.isInteger(n)) throw new ExpressionError(`${what}: expected an integer, got ${n}`);
  return n;
}

export function requireString(value: unknown, what: string): string {
  if (typeof value !== 'string') throw new ExpressionError(`${what}: expected a string argument`);
  return value;
}
