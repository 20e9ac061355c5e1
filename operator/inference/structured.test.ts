// Unit table for structured output: answer validation with ajv (the grammars are tested in gbnf.test.ts).
import { describe, expect, it } from 'vitest';
import { checkAnswer } from './structured.js';

describe('checkAnswer', () => {
  const schema = { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] };
  it.each([
    ['{"n": 3}', true],
    ['{"n": 1e2}', true],
    ['{"n": 1e-1}', false],
    ['{"n": "3"}', false],
    ['{"n": 3', false],
  ])('%s -> %s', (text, ok) => expect(checkAnswer(schema, text).ok).toBe(ok));
});
