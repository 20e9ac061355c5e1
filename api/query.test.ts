// Tables for the label parser of query strings.
import { describe, expect, it } from 'vitest';
import { parseLabels } from './query.js';

describe('parseLabels', () => {
  it.each([
    [['env:prod'], [{ key: 'env', value: 'prod' }]],
    [['url:http://x:80'], [{ key: 'url', value: 'http://x:80' }]],
    [['empty:'], [{ key: 'empty', value: '' }]],
  ])('%j → %j', (input, expected) => { expect(parseLabels(input)).toEqual(expected); });

  it.each([['nocolon'], [':value']])('rejects %s with a 400 naming labels', (bad) => {
    expect(() => parseLabels([bad])).toThrow(expect.objectContaining({ status: 400, errors: [expect.objectContaining({ path: 'labels' })] }));
  });
});
