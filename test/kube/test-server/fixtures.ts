// A small CRD (group test.flowpilot.io) used by the test server's own tests until the generated crds/ exist.
export function widgetCrd(): Record<string, unknown> {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'widgets.test.flowpilot.io' },
    spec: {
      group: 'test.flowpilot.io',
      scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', shortNames: ['wd'] },
      versions: [{
        name: 'v1', served: true, storage: true, subresources: { status: {} },
        schema: {
          openAPIV3Schema: {
            type: 'object',
            properties: {
              spec: {
                type: 'object',
                required: ['size'],
                properties: {
                  size: { type: 'integer', minimum: 0 },
                  color: { type: 'string', enum: ['red', 'blue'], default: 'red' },
                  port: { 'x-kubernetes-int-or-string': true },
                  note: { type: 'string', nullable: true },
                  when: { type: 'string', format: 'date-time' },
                  timeout: { type: 'string', format: 'duration' },
                  tasks: {
                    type: 'array',
                    items: { type: 'object', required: ['id'], properties: { id: { type: 'string', pattern: '^[a-z][a-z0-9-]*$' }, type: { type: 'string' } } },
                  },
                  inputs: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
                  tags: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
                  labels: { type: 'object', additionalProperties: { type: 'string' } },
                },
              },
              status: {
                type: 'object',
                properties: {
                  phase: { type: 'string' },
                  count: { type: 'integer' },
                  conditions: {
                    type: 'array', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['type'],
                    items: { type: 'object', required: ['type'], properties: { type: { type: 'string' }, status: { type: 'string' } } },
                  },
                },
              },
            },
          },
        },
      }],
    },
  };
}

/** A cluster-scoped CRD without a status subresource. */
export function gadgetCrd(): Record<string, unknown> {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'gadgets.test.flowpilot.io' },
    spec: {
      group: 'test.flowpilot.io',
      scope: 'Cluster',
      names: { plural: 'gadgets', singular: 'gadget', kind: 'Gadget' },
      versions: [{
        name: 'v1', served: true, storage: true,
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      }],
    },
  };
}
