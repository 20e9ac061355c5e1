// The secrets of one process: the masker of every value of the secret source (refreshed when the source changes), the
// values each execution adds (its decrypted sealed inputs, what its tasks declare sensitive, its parent's values), and
// the box that seals and opens input values: SECRET ones, and any input text a known secret appears in. Sinks ask
// `masker(executionId)`; the engine and task attempts read inputs through `openInput`.
import type { Execution, Input } from '../core/types.js';
import { createMasker, mapStrings, maskable, type Masker } from './masker.js';
import { inputAad, isSealed, reportedAad, requestAad, type SecretBox } from './sealed.js';

export interface SecretLayerOptions {
  /** Every value of the secret source, read at start and again on `refresh()`. */
  values: () => Iterable<string>;
  /**
   * Seals and opens input values; without it, an execution with a SECRET input cannot be stored, and a known secret
   * in another input is masked instead of sealed.
   */
  box?: SecretBox;
  /** Executions whose own values are kept (the oldest forgotten first; default 10,000). */
  maxExecutions?: number;
}

interface ExecutionSecrets { values: Set<string>; masker?: Masker }

/** The input definitions whose values are sealed: SECRET, and ARRAY of SECRET items. */
const isEmpty = (o: object): boolean => { for (const _ in o) return false; return true; };

const sealedInputs = (defs: Input[] | undefined): Input[] =>
  (defs ?? []).filter((d) => d.type === 'SECRET' || (d.type === 'ARRAY' && d.itemType === 'SECRET'));

export class SecretLayer {
  readonly box?: SecretBox;
  private global: Masker;
  private readonly executions = new Map<string, ExecutionSecrets>();
  /** Opened sealed values by (additional data, sealed text): records are tracked at every write. */
  private readonly opened = new Map<string, string>();
  private readonly max: number;
  /** Inputs objects already learnt (`track`), by execution id: successive records of an execution share them. */
  private readonly tracked = new WeakMap<object, string>();
  /** Inputs objects with nothing left to seal for (execution id, masker): a write that changed neither skips the walk. */
  private readonly settled = new WeakMap<object, { id: string; masker: Masker }>();

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

  /**
   * The values `executionId` added, each sealed for it: what a task Pod's runner reports with its outcome, so the
   * operator masks (and seals in inputs) the credentials its tasks declared. None without a key.
   */
  sealedValues(executionId: string): string[] {
    const box = this.box;
    const e = this.executions.get(executionId);
    if (!box || !e) return [];
    return [...e.values].map((v) => box.seal(v, reportedAad(executionId)));
  }

  /** Remembers the values a runner reported (`sealedValues`); one that does not open (another key, execution) is ignored. */
  learnSealed(executionId: string, sealed: readonly string[]): void {
    const box = this.box;
    if (!box) return;
    this.remember(executionId, sealed.map((s) => box.open(s, reportedAad(executionId))).filter((v): v is string => v !== undefined));
  }

  /** Learns the secret values of a record: its sealed input values, at any depth (opened), and its parent's values. */
  track(exec: Execution): void {
    const parent = exec.parent && this.executions.get(exec.parent.executionId);
    if (parent) this.remember(exec.id, parent.values);
    const inputs = exec.inputs;
    if (!this.box || !inputs || isEmpty(inputs) || this.tracked.get(inputs) === exec.id) return;
    for (const [id, value] of Object.entries(inputs)) {
      const learn = (s: string): string => {
        const clear = isSealed(s) ? this.open(s, inputAad(exec, id)) : undefined;
        if (clear !== undefined) this.remember(exec.id, [clear]);
        return s;
      };
      mapStrings(value, learn, learn);
    }
    this.tracked.set(inputs, exec.id);
  }

  /**
   * The record with its inputs sealed (`defs`: its flow revision's inputs); the same record when nothing changed.
   * SECRET values (and SECRET items) are always sealed, and cannot be stored without a key. With a key, so is every
   * text of any input, at any depth, object keys included, in which a known secret of the execution appears (a
   * password given as a STRING that a task declared a credential): the record never shows it, yet tasks read it in
   * clear (`openInput`), where masking would have handed them `******`. So is a text that only looks sealed (copied
   * from another execution): it opens to itself. Without a key, such texts are left for the masking that follows.
   * The layer learns the record on the way (`track`).
   */
  sealInputs(exec: Execution, defs: Input[] | undefined): Execution {
    if (!exec.inputs || isEmpty(exec.inputs)) { this.track(exec); return exec; }
    let inputs: Record<string, unknown> | undefined;
    const set = (id: string, before: unknown, after: unknown): void => {
      if (after === before) return;
      inputs ??= { ...exec.inputs };
      inputs[id] = after;
    };
    const secret = new Set<string>();
    for (const def of sealedInputs(defs)) {
      secret.add(def.id);
      const value = exec.inputs?.[def.id];
      if (value === undefined || value === null) continue;
      const seal = (v: unknown): unknown => (typeof v === 'string' ? this.sealText(this.boxFor(def.id), inputAad(exec, def.id), v) : v);
      const sealed = Array.isArray(value) ? value.map(seal) : seal(value);
      set(def.id, value, Array.isArray(value) && (sealed as unknown[]).every((v, i) => v === value[i]) ? value : sealed);
    }
    const withSecret = inputs ? { ...exec, inputs } : exec;
    this.track(withSecret);
    const box = this.box;
    const all = withSecret.inputs;
    if (!box || !all || isEmpty(all)) return withSecret;
    const m = this.masker(exec.id);
    const before = this.settled.get(all);
    if (!(before?.id === exec.id && before.masker === m)) {
      for (const [id, value] of Object.entries(all)) {
        if (secret.has(id)) continue;
        const seal = (s: string): string => (isSealed(s) || (m.size > 0 && m.mask(s) !== s) ? this.sealText(box, inputAad(exec, id), s) : s);
        set(id, value, mapStrings(value, seal, seal));
      }
      this.settled.set(inputs ?? all, { id: exec.id, masker: m });
    }
    return inputs ? { ...exec, inputs } : exec;
  }

  /**
   * The clear value of an input as stored in `exec` (any input type: each sealed text in it, at any depth, opened),
   * remembered for masking. A value without sealed texts is returned as it is; a sealed text that does not open is an
   * error.
   */
  openInput = (exec: Execution, inputId: string, stored: unknown): unknown => {
    const open = (s: string): string => {
      if (!isSealed(s)) return s;
      if (!this.box) throw new Error(`Input '${inputId}' is encrypted and no encryption key is set (ENCRYPTION_KEY)`);
      const clear = this.open(s, inputAad(exec, inputId));
      if (clear === undefined) throw new Error(`Input '${inputId}' cannot be decrypted: it was encrypted with another ENCRYPTION_KEY or for another execution`);
      this.remember(exec.id, [clear]);
      return clear;
    };
    return mapStrings(stored, open, open);
  };

  /**
   * The inputs of a Subflow request as a parent's run keeps them (what a restarted controller creates the child from):
   * with a key, each text in which a known secret of the parent appears, and each text that only looks sealed, sealed
   * for that request (`requestAad`), so the child gets the value itself, not `******`; the same value when nothing is
   * to seal. Without a key: undefined (the texts are masked with the rest of the bookkeeping).
   */
  sealRequestInputs(parentId: string, taskRunId: string, iteration: number | undefined, inputs: unknown): unknown {
    const box = this.box;
    if (!box) return undefined;
    const m = this.masker(parentId);
    const aad = requestAad(parentId, taskRunId, iteration);
    return mapStrings(inputs, (s) => (isSealed(s) || (m.size > 0 && m.mask(s) !== s) ? this.sealText(box, aad, s) : s));
  }

  /** The inputs of a kept Subflow request (`sealRequestInputs`) opened; a sealed text that does not open is an error. */
  openRequestInputs(parentId: string, taskRunId: string, iteration: number | undefined, inputs: unknown): unknown {
    const aad = requestAad(parentId, taskRunId, iteration);
    return mapStrings(inputs, (s) => {
      if (!isSealed(s)) return s;
      if (!this.box) throw new Error(`The inputs of the Subflow request of task run '${taskRunId}' are encrypted and no encryption key is set (ENCRYPTION_KEY)`);
      const clear = this.open(s, aad);
      if (clear === undefined) throw new Error(`The inputs of the Subflow request of task run '${taskRunId}' cannot be decrypted: they were encrypted with another ENCRYPTION_KEY`);
      this.remember(parentId, [clear]);
      return clear;
    });
  }

  private boxFor(inputId: string): SecretBox {
    if (!this.box) throw new Error(`SECRET input '${inputId}' cannot be stored: no encryption key is set (ENCRYPTION_KEY, the base64 of 32 bytes)`);
    return this.box;
  }

  /** `text` sealed for `aad`. Sealed for this very execution (a replay or retry copy) it stays; anything else, a sealed-looking text included, is a clear value. */
  private sealText(box: SecretBox, aad: string, text: string): string {
    return isSealed(text) && this.open(text, aad) !== undefined ? text : box.seal(text, aad);
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
