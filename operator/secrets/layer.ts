// The secrets of one process: the masker of every value of the secret source (refreshed when the source changes), the
// values each execution adds (its decrypted SECRET inputs, what its tasks declare sensitive, its parent's values), and
// the box that seals and opens SECRET inputs. Sinks ask `masker(executionId)`; the engine and task attempts read SECRET
// inputs through `openInput`.
import type { Execution, Input } from '../core/types.js';
import { createMasker, maskable, type Masker } from './masker.js';
import { inputAad, isSealed, type SecretBox } from './sealed.js';

export interface SecretLayerOptions {
  /** Every value of the secret source, read at start and again on `refresh()`. */
  values: () => Iterable<string>;
  /** Seals and opens SECRET inputs; without it, an execution with a SECRET input cannot be stored. */
  box?: SecretBox;
  /** Executions whose own values are kept (the oldest forgotten first; default 10,000). */
  maxExecutions?: number;
}

interface ExecutionSecrets { values: Set<string>; masker?: Masker }

/** The input definitions whose values are sealed: SECRET, and ARRAY of SECRET items. */
export const sealedInputs = (defs: Input[] | undefined): Input[] =>
  (defs ?? []).filter((d) => d.type === 'SECRET' || (d.type === 'ARRAY' && d.itemType === 'SECRET'));

export class SecretLayer {
  readonly box?: SecretBox;
  private global: Masker;
  private readonly executions = new Map<string, ExecutionSecrets>();
  /** Opened sealed values by (additional data, sealed text): records are tracked at every write. */
  private readonly opened = new Map<string, string>();
  private readonly max: number;

  constructor(private readonly o: SecretLayerOptions) {
    this.box = o.box;
    this.max = o.maxExecutions ?? 10_000;
    this.global = createMasker(o.values());
  }

  /** Reads the secret source again (a Kubernetes Secret changed). */
  refresh(): void {
    this.global = createMasker(this.o.values());
    for (const e of this.executions.values()) delete e.masker;
  }

  /** The masker of every source secret, plus the values of `executionId` when given. */
  masker(executionId?: string): Masker {
    const e = executionId === undefined ? undefined : this.executions.get(executionId);
    if (!e || e.values.size === 0) return this.global;
    return (e.masker ??= this.global.with(e.values));
  }

  /** Values to mask in everything `executionId` writes from now on (a task's credentials, a decrypted input). */
  remember(executionId: string, values: Iterable<string>): void {
    let e = this.executions.get(executionId);
    for (const v of values) {
      if (!maskable(v) || this.global.values.has(v) || e?.values.has(v)) continue;
      if (!e) e = this.entry(executionId);
      e.values.add(v);
      delete e.masker;
    }
  }

  /** Learns the secret values of a record: its sealed inputs (opened) and its parent's values. */
  track(exec: Execution): void {
    const parent = exec.parent && this.executions.get(exec.parent.executionId);
    if (parent) this.remember(exec.id, parent.values);
    if (!this.box) return;
    for (const [id, value] of Object.entries(exec.inputs ?? {})) {
      for (const v of Array.isArray(value) ? value : [value]) {
        if (!isSealed(v)) continue;
        const clear = this.open(v, inputAad(exec, id));
        if (clear !== undefined) this.remember(exec.id, [clear]);
      }
    }
  }

  /** Seals every clear value of the record's SECRET inputs (`defs`: its flow revision's inputs); the same record when none. */
  sealInputs(exec: Execution, defs: Input[] | undefined): Execution {
    let inputs: Record<string, unknown> | undefined;
    for (const def of sealedInputs(defs)) {
      const value = exec.inputs?.[def.id];
      if (value === undefined || value === null) continue;
      const sealed = Array.isArray(value) ? value.map((v) => this.sealOne(exec, def.id, v)) : this.sealOne(exec, def.id, value);
      if (Array.isArray(value) ? (sealed as unknown[]).every((v, i) => v === value[i]) : sealed === value) continue;
      inputs ??= { ...exec.inputs };
      inputs[def.id] = sealed;
    }
    return inputs ? { ...exec, inputs } : exec;
  }

  /**
   * The clear value of a SECRET input as stored in `exec`, remembered for masking. A value that is not sealed (a
   * record from before encryption) is returned as it is; a sealed one that does not open is an error.
   */
  openInput = (exec: Execution, inputId: string, stored: unknown): unknown => {
    if (!isSealed(stored)) return stored;
    if (!this.box) throw new Error(`SECRET input '${inputId}' is encrypted and no encryption key is set (ENCRYPTION_KEY)`);
    const clear = this.open(stored, inputAad(exec, inputId));
    if (clear === undefined) throw new Error(`SECRET input '${inputId}' cannot be decrypted: it was encrypted with another ENCRYPTION_KEY or for another execution`);
    this.remember(exec.id, [clear]);
    return clear;
  };

  private sealOne(exec: Execution, inputId: string, value: unknown): unknown {
    if (typeof value !== 'string') return value;
    const aad = inputAad(exec, inputId);
    if (!this.box) throw new Error(`SECRET input '${inputId}' cannot be stored: no encryption key is set (ENCRYPTION_KEY, the base64 of 32 bytes)`);
    // Sealed for this very execution (a replay or retry copy) stays; anything else, a sealed-looking text included, is a clear value.
    if (isSealed(value) && this.open(value, aad) !== undefined) return value;
    return this.box.seal(value, aad);
  }

  private open(sealed: string, aad: string): string | undefined {
    const key = `${aad}\0${sealed}`;
    let clear = this.opened.get(key);
    if (clear === undefined && this.box) {
      clear = this.box.open(sealed, aad);
      if (clear === undefined) return undefined;
      this.opened.set(key, clear);
      if (this.opened.size > this.max) this.opened.delete(this.opened.keys().next().value!);
    }
    return clear;
  }

  private entry(executionId: string): ExecutionSecrets {
    const e: ExecutionSecrets = { values: new Set() };
    this.executions.set(executionId, e);
    if (this.executions.size > this.max) this.executions.delete(this.executions.keys().next().value!);
    return e;
  }
}
