// Tests of the structural (Kubernetes CRD) version of the flow schema.
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { flowCrdSchema } from './crd-schema.js';

type Node = Record<string, unknown>;

function* nodes(schema: Node, path = '$'): Generator<[string, Node]> {
  yield [path, schema];
  for (const [k, v] of Object.entries((schema.properties ?? {}) as Record<string, Node>)) yield* nodes(v, `${path}.${k}`);
  if (schema.items) yield* nodes(schema.items as Node, `${path}[]`);
  if (typeof schema.additionalProperties === 'object') yield* nodes(schema.additionalProperties as Node, `${path}{}`);
}

describe('flowCrdSchema', () => {
  const schema = flowCrdSchema();

  it('is structural: every node typed or explicitly opaque, no refs or conditionals', () => {
    for (const [path, node] of nodes(schema)) {
      const opaque = node['x-kubernetes-preserve-unknown-fields'] === true || node['x-kubernetes-int-or-string'] === true;
      expect(typeof node.type === 'string' || opaque, path).toBe(true);
      for (const banned of ['$ref', 'if', 'then', 'allOf', 'oneOf', 'anyOf', 'definitions', '$schema']) {
        expect(node[banned], `${path}.${banned}`).toBeUndefined();
      }
      expect(node.additionalProperties === false, path).toBe(false);
      if (node.properties) expect(node.additionalProperties, path).toBeUndefined();
    }
  });

  it('keeps tasks and triggers open (validated by the operator) and accepts Kestra type names', () => {
    const ajv = new Ajv({ strict: false, allErrors: true });
    const validate = ajv.compile(schema);
    const flow = {
      id: 'f', namespace: 'company.team',
      tasks: [{ id: 'a', type: 'io.kestra.plugin.core.log.Log', message: 'hi' }],
      triggers: [{ id: 't', type: 'io.kestra.plugin.core.trigger.Schedule', cron: '@daily' }],
      concurrency: { limit: 1 },
      inputs: [{ id: 'x', type: 'FLOAT', min: 1.5 }],
    };
    expect(validate(flow), JSON.stringify(validate.errors)).toBe(true);
    expect(validate({ ...flow, namespace: 'Bad NS' })).toBe(false);
    expect(validate({ ...flow, tasks: [{ id: 'a' }] })).toBe(false);
    expect(validate({ ...flow, concurrency: { limit: 0 } })).toBe(false);
  });
});
