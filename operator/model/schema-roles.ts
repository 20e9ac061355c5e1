// Which schema object plays which role (task type name, id, namespace, schema of task type X...), so that
// ajv errors (which carry their parent schema object) can be turned into precise messages without custom keywords.

export type SchemaRole =
  | { kind: 'task-type' } | { kind: 'condition-type' } | { kind: 'runner-type' } | { kind: 'trigger-type' }
  | { kind: 'namespace' } | { kind: 'id'; dots: boolean } | { kind: 'task-schema'; type: string };

const roles = new WeakMap<object, SchemaRole>();

/** Remember the role of a schema object; returns the object for inline use. */
export function tag<T extends object>(schema: T, role: SchemaRole): T {
  roles.set(schema, role);
  return schema;
}

export function roleOf(schema: unknown): SchemaRole | undefined {
  return typeof schema === 'object' && schema !== null ? roles.get(schema) : undefined;
}
