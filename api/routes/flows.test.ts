// Tables for splitting a multi-document YAML text in `/flows/validate`.
import { describe, expect, it } from 'vitest';
import { splitDocuments } from './flows.js';

describe('splitDocuments', () => {
  it.each([
    ['id: a\n', 1],
    ['---\nid: a\n---\nid: b\n', 2],
    ['id: a\n---\n\n---\n# only a comment\n---\nid: b\n', 2],
    ['id: a\ndescription: "x --- y"\n', 1],
  ])('%j → %i documents', (text, n) => { expect(splitDocuments(text)).toHaveLength(n); });
});
