// The plugin reference of docs/plugins.md, generated from the task type definitions (operator/plugins/catalog.ts):
// title, description, properties (type, required, default, description), outputs and examples of every declared type,
// then the flowables (model/flowable-types.ts) and the trigger types (defineTrigger).
// `npm run docs:plugins` writes it (scripts/gen-plugin-docs.ts); docs.test.ts fails when the committed file is stale.
import { FLOWABLES } from '../model/flowable-types.js';
import { PREFIX, shortType } from '../model/task-types.js';
import { taskTypeSchemas } from '../model/schema-tasks.js';
import { TASK_COMMON } from '../model/schema-common.js';
import { TRIGGER_COMMON } from '../model/schema-flow.js';
import type { PluginDefinition, Prop, TriggerDefinition } from './define.js';
import type { Schema } from '../model/schema-common.js';

const COMMON_TASK_PROPERTIES = Object.keys(TASK_COMMON);

export const BEGIN_MARK = '<!-- BEGIN GENERATED PLUGIN REFERENCE (npm run docs:plugins) -->';
export const END_MARK = '<!-- END GENERATED PLUGIN REFERENCE -->';

/** Markdown table cell: one line, pipes escaped. */
const cell = (s: string): string => s.replace(/\r?\n+/g, ' ').replace(/\|/g, '\\|').trim();
const code = (v: unknown): string => `\`${typeof v === 'string' ? v : JSON.stringify(v)}\``;

function propertyRows(props: Record<string, Prop<unknown>>): string[] {
  return Object.entries(props).map(([name, x]) => `| \`${name}\` | ${cell(x.label)}${x.isSecret ? ' (secret)' : ''} | ${x.isRequired ? 'yes' : ''} | ${x.defaultValue !== undefined ? cell(code(x.defaultValue)) : ''} | ${cell(x.description ?? '')} |`);
}

function definitionSection(d: PluginDefinition): string[] {
  const aliases = d.aliases.length ? `; also ${d.aliases.map((a) => `\`${a}\``).join(', ')}` : '';
  const out = [`### ${d.title} (\`${shortType(d.type)}\`)`, '', `Type \`${d.type}\` (Kestra: \`${d.kestraType}\`${aliases}).`, '', d.description.trim(), ''];
  if (Object.keys(d.properties).length) {
    out.push('| Property | Type | Required | Default | Description |', '| --- | --- | --- | --- | --- |', ...propertyRows(d.properties), '');
  } else {
    out.push('No properties of its own.', '');
  }
  const outputs = Object.entries(d.outputs);
  if (outputs.length) {
    out.push('| Output | Type | Description |', '| --- | --- | --- |', ...outputs.map(([n, o]) => `| \`${n}\` | ${o.type} | ${cell(o.description)} |`), '');
  }
  for (const ex of d.examples) out.push(`Example: ${ex.title}`, '', '```yaml', ex.code.trimEnd(), '```', '');
  return out;
}

/** A schema in words, for the trigger tables (triggers declare their properties as schemas). */
function schemaLabel(s: Schema): string {
  if (Array.isArray(s.enum)) return `one of ${s.enum.join(', ')}`;
  if (s.format === 'iso-duration') return 'duration (ISO 8601)';
  const t = s.type;
  return (Array.isArray(t) ? t : t === undefined ? ['any'] : [t]).map((x) => ({ array: 'list', object: 'map' } as Record<string, string>)[String(x)] ?? String(x)).join(' or ');
}

function triggerSection(d: TriggerDefinition): string[] {
  const aliases = d.aliases.length ? `; also ${d.aliases.map((a) => `\`${a}\``).join(', ')}` : '';
  const required = new Set((d.schema.required as string[] | undefined) ?? []);
  const props = Object.entries((d.schema.properties ?? {}) as Record<string, Schema>);
  return [
    `### ${d.title} (\`${shortType(d.type)}\`, ${d.kind})`, '', `Type \`${d.type}\` (Kestra: \`${d.kestraType}\`${aliases}).`, '', d.description.trim(), '',
    '| Property | Type | Required |', '| --- | --- | --- |',
    ...props.map(([n, s]) => `| \`${n}\` | ${cell(schemaLabel(s))} | ${required.has(n) ? 'yes' : ''} |`), '',
  ];
}

/** The generated reference (between the marks of docs/plugins.md): task types, then trigger types. */
export function pluginReference(defs: readonly PluginDefinition[], triggers: readonly TriggerDefinition[] = []): string {
  const sorted = [...defs].sort((a, b) => a.type.localeCompare(b.type));
  const declared = new Set(sorted.map((d) => d.type));
  const families = new Map<string, PluginDefinition[]>();
  for (const d of sorted) {
    const family = shortType(d.type).split('.')[0];
    families.set(family, [...(families.get(family) ?? []), d]);
  }
  const out = [BEGIN_MARK, '', `Every task also accepts the properties all tasks share: ${COMMON_TASK_PROPERTIES.map((n) => `\`${n}\``).join(', ')}.`, ''];
  for (const [family, list] of families) out.push(`## ${family}`, '', ...list.flatMap(definitionSection));
  const flowables = new Map(Object.values(FLOWABLES).map((f) => [PREFIX + f.type, f.description]));
  const rest = Object.entries(taskTypeSchemas()).filter(([t]) => !declared.has(t)).sort(([a], [b]) => a.localeCompare(b));
  if (rest.length) {
    out.push('## Flowables', '', 'Task types the engine evaluates itself (declared in `operator/model/flowable-types.ts`), with the properties their schema accepts (required ones in bold).', '',
      '| Type | What it does | Properties |', '| --- | --- | --- |');
    for (const [type, schema] of rest) {
      const required = new Set((schema.required as string[] | undefined) ?? []);
      const names = Object.keys((schema.properties ?? {}) as object).filter((n) => !COMMON_TASK_PROPERTIES.includes(n));
      out.push(`| \`${shortType(type)}\` | ${cell(flowables.get(type) ?? '')} | ${names.map((n) => (required.has(n) ? `**\`${n}\`**` : `\`${n}\``)).join(', ')} |`);
    }
    out.push('');
  }
  if (triggers.length) {
    const common = Object.keys(TRIGGER_COMMON).map((n) => `\`${n}\``).join(', ');
    out.push('## Triggers', '', `Plugin trigger types (declared with \`defineTrigger\`); every trigger also accepts ${common}.`, '');
    for (const t of [...triggers].sort((a, b) => a.type.localeCompare(b.type))) out.push(...triggerSection(t));
  }
  out.push(END_MARK);
  return out.join('\n');
}

/** `text` (docs/plugins.md) with its generated region replaced by `reference`. */
export function withReference(text: string, reference: string): string {
  const start = text.indexOf(BEGIN_MARK);
  const end = text.indexOf(END_MARK);
  if (start < 0 || end < start) throw new Error(`docs/plugins.md has no region between '${BEGIN_MARK}' and '${END_MARK}'`);
  return text.slice(0, start) + reference + text.slice(end + END_MARK.length);
}
