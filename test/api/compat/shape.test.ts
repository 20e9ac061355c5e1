// The shape checker of the API compatibility suite reports what differs (and passes what matches).
import { describe, expect, it } from 'vitest';
import { expectShape, paged } from './shape.js';

describe('expectShape', () => {
  it('accepts matching values, optional fields absent or null, and extra fields', () => {
    expectShape({ id: 'a', n: 2, extra: true, tags: [{ key: 'k', value: 'v' }], o: null }, {
      id: 'string', n: 'integer', tags: [{ key: 'string', value: 'string' }], o: 'object?', missing: 'string?',
    });
    expectShape({ results: [{ id: 'x' }], total: 1 }, paged({ id: 'string' }));
  });

  it('names every mismatching field', () => {
    expect(() => expectShape({ id: 1, tags: [{ key: 'k' }], n: 1.5 }, {
      id: 'string', tags: [{ key: 'string', value: 'string' }], n: 'integer', deleted: 'boolean',
    })).toThrowError(/\$\.id: number \(want string\)[\s\S]*\$\.tags\[0\]\.value: missing[\s\S]*\$\.n: number \(want integer\)[\s\S]*\$\.deleted: missing/);
  });
});
