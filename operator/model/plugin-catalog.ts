// The plugin catalog the API shows (Kestra's /plugins routes): the task, trigger, condition and task runner types a
// flow may use, each one's property schema, and the flow JSON schema for editors. All derived from the schema the
// validator checks flows with (schema-flow.ts), never written twice; editors also get Kestra's `io.kestra.` names.
import { memoByCatalog, pluginDefinitions } from '../plugins/catalog.js';
import { roleOf } from './schema-roles.js';
import { flowJsonSchema } from './schema-flow.js';
import type { Schema } from './schema-common.js';
import { PREFIX, normalizeType, shortType } from './task-types.js';

export type PluginKind = 'tasks' | 'triggers' | 'conditions' | 'taskRunners';
/** Kestra's Plugin.PluginElementMetadata. */
export interface PluginElement { cls: string; deprecated: boolean; title: string }
/** Kestra's Plugin (the fields we can fill: no manifest, guides or categories). */
export interface PluginInfo {
  name: string;
  title: string;
  group: string;
  description: string;
  version: string;
  aliases: string[];
  tasks: PluginElement[];
  triggers: PluginElement[];
  conditions: PluginElement[];
  taskRunners: PluginElement[];
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Which definition of the flow schema dispatches each kind on `type` (one `if type = X then ...` per type). */
const DISPATCH: Record<PluginKind, string> = { tasks: 'task', triggers: 'trigger', conditions: 'condition', taskRunners: 'taskRunner' };

/** The `type` a dispatch entry matches and the schema it applies (a `$ref` is resolved). */
function dispatchEntries(defs: Record<string, Schema>, kind: PluginKind): { type: string; schema: Schema }[] {
  const allOf = (defs[DISPATCH[kind]].allOf ?? []) as Obj[];
  return allOf.flatMap((entry) => {
    const type = (((entry.if as Obj | undefined)?.properties as Obj | undefined)?.type as Obj | undefined)?.const;
    const then = entry.then as Obj | undefined;
    if (typeof type !== 'string' || !isObj(then)) return [];
    const schema = typeof then.$ref === 'string' ? defs[then.$ref.replace('#/definitions/', '')] : then;
    return isObj(schema) && isObj(schema.properties) ? [{ type, schema }] : [];
  });
}

const KINDS = Object.keys(DISPATCH) as PluginKind[];

/** The flow schema's definitions and every type with its kind and schema (rebuilt when packages add task types). */
const catalog = memoByCatalog(() => {
  const defs = flowJsonSchema().definitions as Record<string, Schema>;
  const byType = new Map<string, { kind: PluginKind; schema: Schema }>();
  for (const kind of KINDS) for (const { type, schema } of dispatchEntries(defs, kind)) byType.set(type, { kind, schema });
  return { defs, byType };
});

/** Kestra's name of one of our types (`io.kestra.plugin.<same>`), when it maps back onto it. */
export function kestraAlias(type: string): string | undefined {
  if (!type.startsWith(PREFIX)) return undefined;
  const alias = `io.kestra.plugin.${type.slice(PREFIX.length)}`;
  return normalizeType(alias) === type ? alias : undefined;
}

const simpleName = (type: string) => type.slice(type.lastIndexOf('.') + 1);
/** Plugins are grouped by the first package segment after the prefix (core, scripts, aws, jdbc...). */
const familyOf = (type: string) => shortType(type).split('.')[0];

/** Every plugin with the types of each kind it provides (Kestra's GET /plugins). */
export function pluginList(version: string): PluginInfo[] {
  const families = new Map<string, PluginInfo>();
  for (const [type, { kind }] of catalog().byType) {
    const family = familyOf(type);
    let p = families.get(family);
    if (!p) {
      p = {
        name: family, title: family, group: `${PREFIX}${family}`, version,
        description: `The ${family} plugins of flowpilot (Kestra's io.kestra.plugin.${family} names are aliases).`,
        aliases: [], tasks: [], triggers: [], conditions: [], taskRunners: [],
      };
      families.set(family, p);
    }
    p[kind].push({ cls: type, deprecated: false, title: simpleName(type) });
    const alias = kestraAlias(type);
    if (alias) p.aliases.push(alias);
  }
  return [...families.values()];
}

/** Names of the definitions a schema refers to, transitively. */
function referenced(defs: Record<string, Schema>, schema: unknown, out = new Set<string>()): Set<string> {
  const visit = (v: unknown): void => {
    if (Array.isArray(v)) { v.forEach(visit); return; }
    if (!isObj(v)) return;
    if (typeof v.$ref === 'string' && v.$ref.startsWith('#/definitions/')) {
      const name = v.$ref.slice('#/definitions/'.length);
      if (!out.has(name)) { out.add(name); visit(defs[name]); }
    }
    Object.values(v).forEach(visit);
  };
  visit(schema);
  return out;
}

/** The task types declared with definePlugin, by canonical type (their title, description, outputs and examples). */
const declared = memoByCatalog(() => new Map(pluginDefinitions().map((d) => [d.type, d])));

/**
 * Kestra's DocumentationWithSchema of one type (canonical or Kestra name): its properties and the definitions they use;
 * for a task type declared with definePlugin, also its description, outputs (`schema.outputs`) and examples.
 */
export function pluginDocumentation(cls: string): { markdown: string; schema: { properties: Schema; outputs?: Schema; definitions: Record<string, Schema> } } | undefined {
  const type = normalizeType(cls);
  const { defs, byType } = catalog();
  const found = byType.get(type);
  if (!found) return undefined;
  const definitions = Object.fromEntries([...referenced(defs, found.schema)].map((n) => [n, defs[n]]));
  const required = Array.isArray(found.schema.required) ? (found.schema.required as string[]) : [];
  const def = declared().get(type);
  const outputs = def ? Object.entries(def.outputs) : [];
  const markdown = [
    `# ${def?.title ?? simpleName(type)}`, '', `\`${type}\`${kestraAlias(type) ? ` (Kestra: \`${kestraAlias(type)}\`)` : ''}`, '',
    ...(def ? [def.description, ''] : []),
    '## Properties', '', ...Object.keys(found.schema.properties as Obj).map((p) => `- \`${p}\`${required.includes(p) ? ' (required)' : ''}`),
    ...(outputs.length ? ['', '## Outputs', '', ...outputs.map(([n, o]) => `- \`${n}\` (${o.type}): ${o.description}`)] : []),
    ...(def?.examples.length ? ['', '## Examples', '', ...def.examples.flatMap((e) => [e.title, '', '```yaml', e.code.trimEnd(), '```', ''])] : []),
  ].join('\n');
  const outputSchema = outputs.length
    ? { outputs: { type: 'object', properties: Object.fromEntries(outputs.map(([n, o]) => [n, { type: o.type === 'uri' ? 'string' : o.type, description: o.description }])) } }
    : {};
  return { markdown, schema: { properties: { title: def?.title ?? simpleName(type), ...found.schema }, ...outputSchema, definitions } };
}

/**
 * The flow schema as editors read it (Kestra's GET /plugins/schemas/flow, JSON Schema draft 7 with `definitions` and a
 * `$ref` to the main one): the validator's schema where every type name also admits its Kestra alias.
 */
function withAliases(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(withAliases);
  if (!isObj(v)) return v;
  const role = roleOf(v)?.kind;
  const out: Obj = {};
  for (const [k, child] of Object.entries(v)) out[k] = withAliases(child);
  const aliasesOf = (names: unknown[]) => names.flatMap((n) => (typeof n === 'string' && kestraAlias(n) ? [kestraAlias(n)!] : []));
  if ((role === 'task-type' || role === 'runner-type' || role === 'condition-type') && Array.isArray(v.enum)) {
    out.enum = [...v.enum, ...aliasesOf(v.enum)];
  }
  if (role === 'trigger-type' && typeof v.pattern === 'string') out.pattern = `^(${PREFIX.replace(/\./g, '\\.')}|io\\.kestra\\.)`;
  // `if: {properties: {type: {const: X}}}` of the dispatch lists: X or its alias.
  const typeProp = isObj(v.properties) && isObj(v.properties.type) ? v.properties.type : undefined;
  if (typeProp && typeof typeProp.const === 'string' && kestraAlias(typeProp.const) && Object.keys(v).every((k) => k === 'properties' || k === 'required')) {
    out.properties = { ...(out.properties as Obj), type: { enum: [typeProp.const, kestraAlias(typeProp.const)] } };
  }
  return out;
}

const editorDefinitions = memoByCatalog(() => {
  const { $schema, $id: _id, definitions, ...flow } = withAliases(flowJsonSchema()) as Obj;
  void _id;
  return { $schema, definitions: { flow, ...(definitions as Record<string, Schema>) } } as Record<string, Schema>;
});

export const SCHEMA_TYPES = ['flow', 'task', 'trigger'] as const;
export type SchemaType = (typeof SCHEMA_TYPES)[number];

/** The editor schema of a flow, a task or a trigger (Kestra's schema types `flow`, `task`, `trigger`). */
export function editorSchema(type: SchemaType): Schema {
  const { $schema, definitions } = editorDefinitions() as Obj;
  return { $schema, $ref: `#/definitions/${type}`, definitions };
}
