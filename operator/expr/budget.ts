// The budget of one rendering (EXPRESSION_TIMEOUT_MS, EXPRESSION_MAX_BYTES): a deadline read every few hundred
// interpreter steps, and a size for every text and value a template builds. Sizes are memoized per object, so shared
// structure (`{% set a = [a, a] %}`) is counted as its JSON text would be, without ever building that text.
import { DEFAULT_LIMITS, limitError, type LimitError, type Limits } from '../core/limits.js';
import { excerpt } from './errors.js';

/** What one top-level render may spend. */
export interface RenderLimits {
  /** Milliseconds (EXPRESSION_TIMEOUT_MS). */
  timeoutMs: number;
  /** Largest text or value, in bytes of its JSON text (EXPRESSION_MAX_BYTES). */
  maxBytes: number;
}

export const DEFAULT_RENDER_LIMITS: RenderLimits = Object.freeze({
  timeoutMs: DEFAULT_LIMITS.expressionTimeoutMs,
  maxBytes: DEFAULT_LIMITS.expressionMaxBytes,
});

/** Steps between two clock reads (a power of two): a read costs ~50 ns, a step a few. */
const CLOCK_EVERY = 256;

/** Sizes up to this are recomputed rather than remembered (cheap, and typical renders then allocate no memo). */
const MEMO_FROM = 1024;

/** What a number counts for: 8 bytes, its size in memory (its JSON text is 1 to 24 characters). */
const NUMBER_BYTES = 8;

/** Monotonic milliseconds. Measures the budget only; what a template sees of time comes from RenderServices.now. */
const monotonic = (): number => performance.now();

export class Budget {
  readonly maxBytes: number;
  /** The template being rendered, named in messages. */
  template = '';
  private steps = 0;
  private readonly deadline: number;
  private sizes: WeakMap<object, number> | undefined;

  constructor(private readonly limits: RenderLimits, private readonly clock: () => number = monotonic) {
    this.maxBytes = limits.maxBytes;
    this.deadline = clock() + limits.timeoutMs;
  }

  /** One interpreter step; reads the clock every CLOCK_EVERY steps. */
  step(): void {
    if ((++this.steps & (CLOCK_EVERY - 1)) === 0) this.checkTime();
  }

  checkTime(): void {
    if (this.clock() > this.deadline) throw this.timeout();
  }

  /** Milliseconds left (<= 0 once over). */
  remainingMs(): number {
    return this.deadline - this.clock();
  }

  timeout(what = 'took too long'): LimitError {
    return limitError('expressionTimeoutMs', `rendering ${this.where()} ${what}`, this.asLimits());
  }

  tooBig(what: string): LimitError {
    return limitError('expressionMaxBytes', `rendering ${this.where()} ${what}`, this.asLimits());
  }

  /** A text the template built; refused when longer than the size limit. */
  text(value: string): string {
    if (value.length > this.maxBytes) throw this.tooBig(`built a text of ${value.length} bytes`);
    return value;
  }

  /** Refuses, before building it, a text of `length` bytes. */
  reserve(length: number): void {
    if (length > this.maxBytes) throw this.tooBig(`would build a text of ${length} bytes`);
  }

  /** A value the template built (text, list or map); its size is remembered, so checking a value made of it is O(1). */
  built<T>(value: T): T {
    if (typeof value === 'string') {
      if (value.length > this.maxBytes) throw this.tooBig(`built a text of ${value.length} bytes`);
    } else if (typeof value === 'object' && value !== null && this.sizeOf(value) > this.maxBytes) {
      throw this.tooBig(`built a value of more than ${this.maxBytes} bytes`);
    }
    return value;
  }

  /** Length of the value's JSON text (numbers count 8, escapes are not counted); stops counting once over the limit. */
  sizeOf(value: unknown): number {
    if (typeof value === 'string') return value.length + 2;
    if (typeof value === 'number') return NUMBER_BYTES;
    if (value === null || typeof value !== 'object') return 5;
    if (value instanceof Date) return 26;
    const known = this.sizes?.get(value);
    if (known !== undefined) return known;
    let total = 2;
    if (Array.isArray(value)) {
      for (const item of value) {
        total += this.sizeOf(item) + 1;
        if (total > this.maxBytes) return total;
      }
    } else {
      const record = value as Record<string, unknown>;
      for (const key in record) {
        total += key.length + 4 + this.sizeOf(record[key]);
        if (total > this.maxBytes) return total;
      }
    }
    if (total > MEMO_FROM) (this.sizes ??= new WeakMap()).set(value, total);
    return total;
  }

  private where(): string {
    return this.template ? `\`${excerpt(this.template, 80)}\`` : 'a template';
  }

  private asLimits(): Limits {
    return { ...DEFAULT_LIMITS, expressionTimeoutMs: this.limits.timeoutMs, expressionMaxBytes: this.limits.maxBytes };
  }
}
