// Tables for the label parser of query strings (reserved names refused as keys, fine as values).
import { describe, expect, it } from 'vitest';
import { parseLabels } from './query.js';

describe('parseLabels', () => {
  it.each([
    [['env:prod'], [{ key: 'env', value: 'prod' }]],
    [['url:http://x:80'], [{ key: 'url', value: 'http://x:80' }]],
    [['empty:'], [{ key: 'empty', value: '' }]],
    [['proto:__proto__'], [{ key: 'proto', value: '__proto__' }]],
  ])('%j → %j', (input, expected) => { expect(parseLabels(input)).toEqual(expected); });

  it.each([['nocolon'], [':value'], ['__proto__:x'], ['constructor:x'], ['a.prototype:x']])('rejects %s with a 400 naming labels', (bad) => {
    expect(() => parseLabels([bad])).toThrow(expect.objectContaining({ status: 400, errors: [expect.objectContaining({ path: 'labels' })] }));
  });
});
