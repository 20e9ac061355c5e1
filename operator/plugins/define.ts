// One place to declare a runnable task type: `definePlugin({ type, properties, outputs, run })`. The properties are
// declared once with the builders below; from them come the JSON schema the validator checks flows with, the docs,
// and the typed, rendered values `run` receives. A leaf module (it imports no model or plugin registry), so plugin
// modules that use it can be listed by the model's catalog without an import cycle.
import { parseDuration } from '../model/duration.js';
import { taskSchema, type Schema } from '../model/schema-common.js';
import type { RunContext, RunnablePlugin, TaskResult } from './types.js';

/** Prefix of canonical type names (`ai.service.plugin.` + the Kestra name after `io.kestra.plugin.`). */
export const PLUGIN_PREFIX = 'ai.service.plugin.';

/** One declared property: its JSON schema, whether a flow must set it, and how its value is rendered and typed. */
export interface Prop<T> {
  readonly schema: Schema;
  readonly isRequired: boolean;
  readonly description?: string;
  /** The rendered value is a credential: masked in everything the execution writes (RunContext.secrets). */
  readonly isSecret: boolean;
  /** The value used when a flow does not set it (`.default(v)`), for the docs. */
  readonly defaultValue?: unknown;
  /** What a flow writes, in words (`string`, `integer`, `list of strings`...), for the docs. */
  readonly label: string;
  /** Renders and types the raw value a flow wrote (undefined when absent); throws a message naming the property. */
  read(ctx: RunContext, raw: unknown, name: string): T;
  required(): Prop<Exclude<T, undefined>>;
  default(value: Exclude<T, undefined>): Prop<Exclude<T, undefined>>;
  describe(text: string): Prop<T>;
  secret(): Prop<T>;
}

type Reader<T> = (ctx: RunContext, raw: unknown, name: string) => T;
interface PropOptions { isRequired?: boolean; description?: string; isSecret?: boolean; defaultValue?: unknown; label?: string }

function prop<T>(schema: Schema, reader: Reader<T>, opts: PropOptions = {}): Prop<T> {
  const self: Prop<T> = {
    schema: opts.description ? { ...schema, description: opts.description } : schema,
    isRequired: opts.isRequired ?? false,
    description: opts.description,
    isSecret: opts.isSecret ?? false,
    ...(opts.defaultValue !== undefined ? { defaultValue: opts.defaultValue } : {}),
    label: opts.label ?? labelOf(schema),
    read(ctx, raw, name) {
      if (raw === undefined || raw === null) {
        if (self.isRequired) throw new Error(`Missing required property '${name}'`);
        return reader(ctx, undefined, name);
      }
      const value = reader(ctx, raw, name);
      if (self.isSecret && typeof value === 'string' && value !== '') ctx.secrets.add(value);
      return value;
    },
    required: () => prop(schema, reader as Reader<Exclude<T, undefined>>, { ...opts, isRequired: true }),
    default: (value) => prop(schema, ((ctx, raw, name) => (raw === undefined || raw === null ? value : reader(ctx, raw, name))) as Reader<Exclude<T, undefined>>,
      { ...opts, defaultValue: value }),
    describe: (text) => prop(schema, reader, { ...opts, description: text }),
    secret: () => prop(schema, reader, { ...opts, isSecret: true }),
  };
  return self;
}

const TEMPLATE: Schema = { type: 'string', format: 'template' };

/** A property's type in words, from its schema (builders that know better pass a label). */
function labelOf(schema: Schema): string {
  const t = schema.type;
  if (schema.format === 'iso-duration') return 'duration (ISO 8601)';
  if (Array.isArray(schema.enum)) return `one of ${schema.enum.join(', ')}`;
  // A templated number or boolean is written natively or as an expression: its type is the native one.
  const types = (Array.isArray(t) ? t : t === undefined ? [] : [t]).filter((x) => x !== 'string' || schema.format !== 'template' || t === 'string');
  if (types.length === 0) return Array.isArray(schema.anyOf) ? 'see the schema' : 'any';
  const words: Record<string, string> = { array: 'list', object: 'map' };
  return types.map((x) => words[String(x)] ?? String(x)).join(' or ');
}

function renderText(ctx: RunContext, raw: unknown): string {
  if (typeof raw === 'string') return ctx.render(raw);
  if (typeof raw === 'object') return JSON.stringify(ctx.renderValue(raw));
  return String(raw);
}

function typed(ctx: RunContext, raw: unknown): unknown {
  return typeof raw === 'string' ? ctx.renderTyped(raw) : ctx.renderValue(raw);
}

function toNumber(v: unknown, name: string, integer: boolean, min?: number, max?: number): number {
  const n = typeof v === 'number' ? v : typeof v === 'string' && v.trim() !== '' ? Number(v) : NaN;
  if (!Number.isFinite(n) || (integer && !Number.isInteger(n))) {
    throw new Error(`Property '${name}' must be ${integer ? 'an integer' : 'a number'}, got '${String(v)}'`);
  }
  if (min !== undefined && n < min) throw new Error(`Property '${name}' must be at least ${min}, got ${n}`);
  if (max !== undefined && n > max) throw new Error(`Property '${name}' must be at most ${max}, got ${n}`);
  return n;
}

function toStringList(v: unknown, name: string): string[] {
  let value = v;
  if (typeof value === 'string') {
    const s = value.trim();
    if (s.startsWith('[')) {
      try { value = JSON.parse(s); } catch { /* a plain string */ }
    }
  }
  if (typeof value === 'string') return [value];
  if (!Array.isArray(value)) throw new Error(`Property '${name}' must be a list of strings`);
  return value.map((x) => (typeof x === 'string' ? x : typeof x === 'object' && x !== null ? JSON.stringify(x) : String(x)));
}

const boundsLabel = (base: string, b: { min?: number; max?: number }): string =>
  b.min !== undefined && b.max !== undefined ? `${base} (${b.min} to ${b.max})` : b.min !== undefined ? `${base} (at least ${b.min})` : b.max !== undefined ? `${base} (at most ${b.max})` : base;

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Property builders. A property is optional (`undefined` when absent) unless `.required()` or `.default(v)`. */
export const p = {
  /** A string, rendered (`{{ }}` expressions allowed). Maps/lists written in its place are rendered as JSON text. */
  string: (): Prop<string | undefined> =>
    prop({ type: 'string' }, (ctx, raw) => (raw === undefined ? undefined : renderText(ctx, raw)), { label: 'string' }),
  /**
   * Text: a string, or a number or boolean written in its place, rendered (`{{ }}` allowed) to a string. `schema`
   * widens what a flow may write (e.g. `{}`: any value, maps and lists rendered as JSON text).
   */
  text: (schema: Schema = { type: ['string', 'number', 'boolean'] }): Prop<string | undefined> =>
    prop(schema, (ctx, raw) => (raw === undefined ? undefined : renderText(ctx, raw)), { label: 'string' }),
  /** An ISO 8601 duration (`PT30S`) kept as its rendered text (for a store or a service that reads durations itself). */
  durationText: (): Prop<string | undefined> =>
    prop({ type: 'string', format: 'iso-duration' }, (ctx, raw) => (raw === undefined ? undefined : renderText(ctx, raw))),
  /** A boolean, or an expression rendering to `true`/`false`. */
  boolean: (): Prop<boolean | undefined> =>
    prop({ type: ['boolean', 'string'], format: 'template' }, (ctx, raw, name) => {
      if (raw === undefined || typeof raw === 'boolean') return raw;
      const v = typed(ctx, raw);
      if (typeof v === 'boolean') return v;
      const s = String(v).trim().toLowerCase();
      if (s === 'true' || s === 'false') return s === 'true';
      throw new Error(`Property '${name}' must be a boolean, got '${String(v)}'`);
    }, { label: 'boolean' }),
  /** An integer (native or an expression), within optional bounds. */
  integer: (bounds: { min?: number; max?: number } = {}): Prop<number | undefined> =>
    prop({ type: ['integer', 'string'], format: 'template', ...(bounds.min !== undefined ? { minimum: bounds.min } : {}), ...(bounds.max !== undefined ? { maximum: bounds.max } : {}) },
      (ctx, raw, name) => (raw === undefined ? undefined : toNumber(typed(ctx, raw), name, true, bounds.min, bounds.max)), { label: boundsLabel('integer', bounds) }),
  /** A number (native or an expression), within optional bounds. */
  number: (bounds: { min?: number; max?: number } = {}): Prop<number | undefined> =>
    prop({ type: ['number', 'string'], format: 'template' },
      (ctx, raw, name) => (raw === undefined ? undefined : toNumber(typed(ctx, raw), name, false, bounds.min, bounds.max)), { label: boundsLabel('number', bounds) }),
  /** An ISO 8601 duration (`PT30S`), read as milliseconds. */
  duration: (): Prop<number | undefined> =>
    prop({ type: 'string', format: 'iso-duration' }, (ctx, raw, name) => {
      if (raw === undefined) return undefined;
      try { return parseDuration(renderText(ctx, raw)); } catch (err) { throw new Error(`Property '${name}': ${(err as Error).message}`); }
    }),
  /** One of fixed values (an expression rendering to one is accepted too). */
  enum: <const V extends string>(values: readonly V[]): Prop<V | undefined> =>
    prop({ type: 'string', anyOf: [{ enum: [...values] }, { pattern: '\\{\\{.*\\}\\}' }] }, (ctx, raw, name) => {
      if (raw === undefined) return undefined;
      const v = renderText(ctx, raw).trim();
      const found = values.find((x) => x === v) ?? values.find((x) => x.toLowerCase() === v.toLowerCase());
      if (!found) throw new Error(`Property '${name}' must be one of ${values.join(', ')}, got '${v}'`);
      return found;
    }, { label: `one of ${values.join(', ')}` }),
  /** A list of strings (or an expression rendering to one, or a single string). Items are rendered. */
  stringList: (): Prop<string[] | undefined> =>
    prop({ type: ['array', 'string'], items: { type: 'string' } }, (ctx, raw, name) => (raw === undefined ? undefined : toStringList(typed(ctx, raw), name)), { label: 'list of strings' }),
  /** A map of strings (headers, environment): keys and values rendered, values stringified; prototype-free. */
  stringMap: (): Prop<Record<string, string> | undefined> =>
    prop({ anyOf: [{ type: 'object', additionalProperties: { type: ['string', 'number', 'boolean'] } }, TEMPLATE] }, (ctx, raw, name) => {
      if (raw === undefined) return undefined;
      const v = typed(ctx, raw);
      if (!isRecord(v)) throw new Error(`Property '${name}' must be a map`);
      const out: Record<string, string> = Object.create(null);
      for (const [k, x] of Object.entries(v)) {
        if (x === undefined || x === null) continue;
        out[k] = typeof x === 'string' ? x : typeof x === 'object' ? JSON.stringify(x) : String(x);
      }
      return out;
    }, { label: 'map of strings' }),
  /** Any value: strings rendered to native values where an expression yields one, maps and lists rendered deeply. */
  any: (): Prop<unknown> => prop({}, (ctx, raw) => (raw === undefined ? undefined : typed(ctx, raw))),
  /** A map, rendered deeply. */
  map: (): Prop<Record<string, unknown> | undefined> =>
    prop({ type: ['object', 'string'] }, (ctx, raw, name) => {
      if (raw === undefined) return undefined;
      const v = typed(ctx, raw);
      if (!isRecord(v)) throw new Error(`Property '${name}' must be a map`);
      return v;
    }, { label: 'map' }),
  /** A nested object of declared properties (each typed and rendered as declared). */
  object: <S extends Props>(props: S): Prop<PropValues<S> | undefined> =>
    prop(objectSchema(props), (ctx, raw, name) => {
      if (raw === undefined) return undefined;
      const v = typeof raw === 'string' ? ctx.renderTyped(raw) : raw;
      if (!isRecord(v)) throw new Error(`Property '${name}' must be a map`);
      return readProps(ctx, props, v, `${name}.`);
    }, { label: `object (${Object.keys(props).join(', ')})` }),
  /**
   * A list of nested objects of declared properties (each item typed and rendered as declared), or an expression
   * rendering to one (e.g. `{{ inputs.files | toJson }}`, a JSON list).
   */
  objectList: <S extends Props>(props: S): Prop<PropValues<S>[] | undefined> =>
    prop({ anyOf: [{ type: 'array', items: objectSchema(props) }, TEMPLATE] }, (ctx, raw, name) => {
      if (raw === undefined) return undefined;
      let v = typeof raw === 'string' ? ctx.renderTyped(raw) : raw;
      if (typeof v === 'string') {
        const s = v.trim();
        if (s === '') return [];
        try { v = JSON.parse(s); } catch { throw new Error(`Property '${name}' must be a list of maps, got text that is not JSON`); }
      }
      if (!Array.isArray(v)) throw new Error(`Property '${name}' must be a list of maps`);
      return v.map((item, i) => {
        if (!isRecord(item)) throw new Error(`Property '${name}[${i}]' must be a map`);
        return readProps(ctx, props, item, `${name}[${i}].`);
      });
    }, { label: `list of objects (${Object.keys(props).join(', ')})` }),
  /** The raw value, not rendered (for properties the plugin renders itself, e.g. with extra variables), with a schema. */
  raw: (schema: Schema = {}): Prop<unknown> => prop(schema, (_ctx, raw) => raw),
};

export type Props = Record<string, Prop<unknown>>;
export type PropValues<S extends Props> = { [K in keyof S]: S[K] extends Prop<infer T> ? T : never };

function objectSchema(props: Props): Schema {
  const required = Object.entries(props).filter(([, x]) => x.isRequired).map(([k]) => k);
  return {
    type: 'object',
    properties: Object.fromEntries(Object.entries(props).map(([k, x]) => [k, x.schema])),
    ...(required.length ? { required } : {}),
    additionalProperties: false,
  };
}

function readProps<S extends Props>(ctx: RunContext, props: S, source: Record<string, unknown>, path = ''): PropValues<S> {
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(props)) out[k] = x.read(ctx, Object.hasOwn(source, k) ? source[k] : undefined, path + k);
  return out as PropValues<S>;
}

/** An output a task type returns: for the docs and the editor (`{{ outputs.<task>.<name> }}`). */
export interface OutputDoc { type: 'string' | 'number' | 'integer' | 'boolean' | 'object' | 'array' | 'uri' | 'any'; description: string }

export interface PluginSpec<S extends Props> {
  /** Kestra's name after `io.kestra.plugin.` (e.g. `notifications.slack.SlackIncomingWebhook`). */
  type: string;
  /** Other full names accepted for it (older Kestra class names). */
  aliases?: string[];
  title: string;
  description: string;
  properties: S;
  outputs?: Record<string, OutputDoc>;
  /** Flow YAML examples for the docs (each a whole flow or a task list). */
  examples?: { title: string; code: string }[];
  /** Pure and quick (no process, no network): may run inside the engine batch (RunnablePlugin.inline). */
  inline?: boolean;
  /** One attempt, with the properties rendered and typed. Throwing is FAILED with the error's message. */
  run(ctx: RunContext, props: PropValues<S>): Promise<TaskResult>;
}

/** A declared task type: everything derived from one `definePlugin` call. */
export interface PluginDefinition {
  /** Canonical type name (`ai.service.plugin.` + spec.type). */
  type: string;
  kestraType: string;
  aliases: string[];
  title: string;
  description: string;
  /** JSON schema of the task (common task properties plus the declared ones; unknown properties rejected). */
  schema: Schema;
  properties: Props;
  outputs: Record<string, OutputDoc>;
  examples: { title: string; code: string }[];
  runnable: RunnablePlugin;
}

export function definePlugin<S extends Props>(spec: PluginSpec<S>): PluginDefinition {
  const type = PLUGIN_PREFIX + spec.type;
  const required = Object.entries(spec.properties).filter(([, x]) => x.isRequired).map(([k]) => k);
  const schema = taskSchema(Object.fromEntries(Object.entries(spec.properties).map(([k, x]) => [k, x.schema])), required);
  const runnable: RunnablePlugin = {
    type,
    ...(spec.inline ? { inline: true } : {}),
    async run(ctx) {
      if (ctx.signal.aborted) return { state: 'FAILED', error: 'Task killed' };
      try {
        const props = readProps(ctx, spec.properties, ctx.task as Record<string, unknown>);
        return await spec.run(ctx, props);
      } catch (err) {
        if (ctx.signal.aborted) return { state: 'FAILED', error: 'Task killed' };
        return { state: 'FAILED', error: err instanceof Error ? err.message : String(err) };
      }
    },
  };
  return {
    type,
    kestraType: `io.kestra.plugin.${spec.type}`,
    aliases: spec.aliases ?? [],
    title: spec.title,
    description: spec.description,
    schema,
    properties: spec.properties,
    outputs: spec.outputs ?? {},
    examples: spec.examples ?? [],
    runnable,
  };
}

/** A trigger type's own properties (JSON schema of each), those a flow must set, and extra rules (`allOf`). */
export interface TriggerSpec {
  /** Kestra's name after `io.kestra.plugin.` (e.g. `redis.list.RealtimeTrigger`). */
  type: string;
  /** Other names accepted for it, after `io.kestra.plugin.` (Kestra moved some plugins between packages). */
  aliases?: string[];
  title: string;
  description: string;
  /** Polling (checks every `interval`) or realtime (one execution per message). */
  kind: 'polling' | 'realtime';
  properties: Record<string, Schema>;
  required?: string[];
  allOf?: Schema[];
  /** What `{{ trigger.<name> }}` holds in the executions it starts. */
  outputs?: Record<string, OutputDoc>;
}

/**
 * A declared trigger type: one `defineTrigger` call gives the name, aliases, docs and the schema of its own properties
 * (the flow schema adds those every trigger shares); its source (operator/triggers/sources) runs it by the same type.
 * Trigger properties are rendered by the source when it starts (some per message), so they are declared as schemas.
 */
export interface TriggerDefinition {
  type: string;
  kestraType: string;
  /** Canonical names of its aliases. */
  aliases: string[];
  title: string;
  description: string;
  kind: 'polling' | 'realtime';
  /** `{ type: object, required, properties, allOf? }` of its own properties. */
  schema: Schema;
  outputs: Record<string, OutputDoc>;
}

export function defineTrigger(spec: TriggerSpec): TriggerDefinition {
  return {
    type: PLUGIN_PREFIX + spec.type,
    kestraType: `io.kestra.plugin.${spec.type}`,
    aliases: (spec.aliases ?? []).map((a) => PLUGIN_PREFIX + a),
    title: spec.title,
    description: spec.description,
    kind: spec.kind,
    schema: { type: 'object', required: spec.required ?? [], properties: spec.properties, ...(spec.allOf ? { allOf: spec.allOf } : {}) },
    outputs: spec.outputs ?? {},
  };
}
