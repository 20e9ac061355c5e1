// Which schema object plays which role (task type name, id, namespace, schema of task type X...), so that
// ajv errors (which carry their parent schema object) can be turned into precise messages without custom keywords.

export type SchemaRole =
  | { kind: 'task-type' } | { kind: 'condition-type' } | { kind: 'runner-type' } | { kind: 'trigger-type' }
  | { kind: 'namespace' } | { kind: 'id'; dots: boolean } | { kind: 'task-schema'; type: string }
  /** One of `values`, or a template rendered at run time. */
  | { kind: 'templated-enum'; values: readonly string[] };

const roles = new WeakMap<object, SchemaRole>();

/** Remember the role of a schema object; returns the object for inline use. */
export function tag<T extends object>(schema: T, role: SchemaRole): T {
  roles.set(schema, role);
  return schema;
}

/** A string that is one of `values` or a `{{ }}` template (checked again once rendered). */
export function templatedEnum(values: readonly string[]): Record<string, unknown> {
  const alternatives = values.map((v) => v.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|');
  return tag({ type: 'string', pattern: `^(${alternatives}|.*\\{\\{.*\\}\\}.*)$` }, { kind: 'templated-enum', values });
}

export function roleOf(schema: unknown): SchemaRole | undefined {
  return typeof schema === 'object' && schema !== null ? roles.get(schema) : undefined;
}

const crdRequired = new WeakMap<object, string[]>();

/**
 * The `required` list a Kubernetes CRD keeps for this schema object instead of its own: a CR holds the flow as written,
 * before normalization (an input's former `name` stands for its `id`), and validateFlow checks the rest.
 */
export function requiredInCrd<T extends object>(schema: T, required: string[]): T {
  crdRequired.set(schema, required);
  return schema;
}

export function crdRequiredOf(schema: object): string[] | undefined {
  return crdRequired.get(schema);
}
