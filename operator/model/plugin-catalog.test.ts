// Tests of the plugin catalog (operator/model/plugin-catalog.ts): the plugin list covers every type the validator
// accepts, a type's documentation, and the editor flow schema (compiled by ajv) accepting Kestra's names.
import { Ajv } from 'ajv';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { isDuration } from './duration.js';
import { flowJsonSchema } from './schema-flow.js';
import { editorSchema, kestraAlias, pluginDocumentation, pluginList } from './plugin-catalog.js';
import { taskTypeSchemas } from './schema-tasks.js';
import { CONDITION_TYPES, TASK_RUNNER_TYPES, TRIGGER_TYPES } from './task-types.js';

function compile(schema: object) {
  const hasTemplate = (s: string) => s.includes('{{') || s.includes('{%');
  const ajv = new Ajv({ allErrors: true, allowUnionTypes: true, strict: true, strictRequired: false });
  ajv.addFormat('iso-duration', { type: 'string', validate: (s: string) => hasTemplate(s) || isDuration(s) });
  ajv.addFormat('template', { type: 'string', validate: hasTemplate });
  return ajv.compile(schema);
}

describe('plugin list', () => {
  const plugins = pluginList('1.0.0');
  const all = (k: 'tasks' | 'triggers' | 'conditions' | 'taskRunners') => plugins.flatMap((p) => p[k].map((e) => e.cls));

  it('lists every task, trigger, condition and task runner type the validator accepts', () => {
    expect(all('tasks').sort()).toEqual(Object.keys(taskTypeSchemas()).sort());
    expect(all('conditions').sort()).toEqual([...CONDITION_TYPES].sort());
    expect(all('taskRunners').sort()).toEqual([...TASK_RUNNER_TYPES].sort());
    for (const t of Object.values(TRIGGER_TYPES)) expect(all('triggers')).toContain(t);
  });

  it('groups by family, with Kestra aliases', () => {
    const core = plugins.find((p) => p.name === 'core')!;
    expect(core.group).toBe('ai.service.plugin.core');
    expect(core.tasks).toContainEqual({ cls: 'ai.service.plugin.core.log.Log', deprecated: false, title: 'Log' });
    expect(core.aliases).toContain('io.kestra.plugin.core.log.Log');
    expect(plugins.find((p) => p.name === 'scripts')!.tasks.map((t) => t.cls)).toContain('ai.service.plugin.scripts.shell.Commands');
  });
});

describe('plugin documentation', () => {
  it('gives a type\'s properties and the definitions they use, by our name or Kestra\'s', () => {
    const doc = pluginDocumentation('io.kestra.plugin.core.flow.Sequential')!;
    expect(doc.schema.properties).toMatchObject({ title: 'Sequential', required: ['id', 'type', 'tasks'] });
    expect(Object.keys(doc.schema.properties.properties as object)).toEqual(expect.arrayContaining(['tasks', 'errors', 'finally', 'retry']));
    expect(Object.keys(doc.schema.definitions)).toEqual(expect.arrayContaining(['task', 'tasks', 'taskRetry']));
    expect(doc.markdown).toContain('`tasks` (required)');
    expect(pluginDocumentation('ai.service.plugin.core.trigger.Schedule')!.schema.properties.properties).toHaveProperty('cron');
    expect(pluginDocumentation('ai.service.plugin.core.condition.ExecutionFlowCondition')!.schema.properties.properties).toHaveProperty('flowId');
    expect(pluginDocumentation('no.such.Type')).toBeUndefined();
  });

  it('gives a declared task type\'s description, outputs and examples', () => {
    const doc = pluginDocumentation('io.kestra.plugin.core.http.Request')!;
    expect(doc.markdown).toContain('# HTTP request');
    expect(doc.markdown).toContain('- `code` (integer): The response status.');
    expect(doc.markdown).toContain('```yaml\nid: post\n');
    expect(doc.schema.outputs).toMatchObject({ type: 'object', properties: { code: { type: 'integer' }, body: { type: 'string' } } });
  });
});

describe('editor flow schema', () => {
  const validate = compile(editorSchema('flow'));

  it('is the validator\'s schema: Kestra shape with a $ref to the main definition', () => {
    const s = editorSchema('flow') as { $ref: string; definitions: Record<string, { properties?: object }> };
    expect(s.$ref).toBe('#/definitions/flow');
    expect(Object.keys(s.definitions.flow.properties!)).toEqual(Object.keys(flowJsonSchema().properties as object));
  });

  it('accepts Kestra\'s type names and refuses unknown properties', () => {
    const flow = {
      id: 'f', namespace: 'company.team',
      tasks: [
        { id: 'a', type: 'io.kestra.plugin.core.log.Log', message: 'hi' },
        { id: 's', type: 'io.kestra.plugin.scripts.shell.Commands', commands: ['echo'], taskRunner: { type: 'io.kestra.plugin.core.runner.Process' } },
      ],
      triggers: [{ id: 't', type: 'io.kestra.plugin.core.trigger.Flow', conditions: [{ type: 'io.kestra.plugin.core.condition.ExecutionFlowCondition', namespace: 'a', flowId: 'b' }] }],
    };
    expect(validate(flow), JSON.stringify(validate.errors)).toBe(true);
    expect(validate({ ...flow, tasks: [{ id: 'a', type: 'io.kestra.plugin.core.log.Log', message: 'hi', nope: 1 }] })).toBe(false);
    expect(validate({ ...flow, tasks: [{ id: 'a', type: 'io.kestra.plugin.core.log.Nope', message: 'hi' }] })).toBe(false);
  });

  it('accepts every example flow of the repository', () => {
    const dir = path.resolve(__dirname, '../../examples/flows');
    for (const file of readdirSync(dir).filter((f) => f.endsWith('.yaml'))) {
      for (const doc of parseAllDocuments(readFileSync(path.join(dir, file), 'utf8'))) {
        expect(validate(doc.toJS()), `${file}: ${JSON.stringify(validate.errors?.slice(0, 3))}`).toBe(true);
      }
    }
  });

  it('maps our names onto Kestra\'s only when they normalize back', () => {
    expect(kestraAlias('ai.service.plugin.core.flow.Subflow')).toBe('io.kestra.plugin.core.flow.Subflow');
    expect(kestraAlias('something.else')).toBeUndefined();
  });
});
