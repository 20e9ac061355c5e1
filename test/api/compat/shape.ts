// Kestra JSON shape assertions for the API compatibility suite (test/api/compat/*.test.ts): field names and JSON
// types taken from Kestra's models (io.kestra.core.models.*) and its client SDK's OpenAPI spec.
/**
 * A shape: a JSON type name (`'string' | 'number' | 'integer' | 'boolean' | 'object' | 'array' | 'null' | 'any'`,
 * suffix `?` when the field may be absent or null), an object of field shapes (extra fields allowed), or a one-element
 * array `[shape]` whose every item must match.
 */
export type Shape = string | { [field: string]: Shape } | [Shape];

function typeOf(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}

function check(value: unknown, shape: Shape, at: string, errors: string[]): void {
  if (typeof shape === 'string') {
    const optional = shape.endsWith('?');
    const want = optional ? shape.slice(0, -1) : shape;
    if (value === undefined || value === null) {
      if (!optional && !(want === 'null' && value === null)) errors.push(`${at}: missing (want ${want})`);
      return;
    }
    if (want === 'any') return;
    const got = typeOf(value);
    if (want === 'integer' ? !Number.isInteger(value) : got !== want) errors.push(`${at}: ${got} (want ${want})`);
    return;
  }
  if (Array.isArray(shape)) {
    if (!Array.isArray(value)) { errors.push(`${at}: ${typeOf(value)} (want array)`); return; }
    value.forEach((item, i) => check(item, shape[0], `${at}[${i}]`, errors));
    return;
  }
  if (typeOf(value) !== 'object') { errors.push(`${at}: ${typeOf(value)} (want object)`); return; }
  for (const [field, s] of Object.entries(shape)) check((value as Record<string, unknown>)[field], s, `${at}.${field}`, errors);
}

/** Fails listing every field of `value` that does not match `shape`. */
export function expectShape(value: unknown, shape: Shape, name = '$'): void {
  const errors: string[] = [];
  check(value, shape, name, errors);
  if (errors.length > 0) throw new Error(`${errors.join('\n')}\nin ${JSON.stringify(value)?.slice(0, 2000)}`);
}

/** `{results: [item], total}`: Kestra's PagedResults. */
export const paged = (item: Shape): Shape => ({ results: [item], total: 'integer' });
