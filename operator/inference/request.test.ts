// Unit table for batch request validation: each bad field is named; defaults are filled in.
import { describe, expect, it } from 'vitest';
import { RequestError, validateRequest } from './request.js';

const limits = { modelIds: ['llama2_7b', 'mistral_7b'], maxInputs: 3, maxTokens: 100, defaultMaxTokens: 16, completionWindowSeconds: 86400 };
const ok = { model: 'llama2_7b', list_inputs: ['a'], bucket_name: 'my-bucket', session: 's1' };
const fieldOf = (body: unknown): string | undefined => {
  try { validateRequest(body, limits); return undefined; } catch (e) { return (e as RequestError).field; }
};

describe('validateRequest', () => {
  it('fills defaults', () => {
    expect(validateRequest(ok, limits)).toMatchObject({ storage_provider: 's3', max_tokens: 16, return_output: false });
  });
  it('accepts an input file alone, gcs, a role and a schema given as text', () => {
    const r = validateRequest({ ...ok, list_inputs: undefined, input_json_file: 'in/put.json', storage_provider: 'gcs',
      role_arn: 'arn:aws:iam::123456789012:role/r', structured_output: '{"type":"object"}' }, limits);
    expect(r.structured_output).toEqual({ type: 'object' });
  });
  it('reads completion_window as OpenAI writes it or in seconds, up to the limit', () => {
    expect(validateRequest({ ...ok, completion_window: '24h' }, limits).completion_window).toBe(86_400);
    expect(validateRequest({ ...ok, completion_window: '90m' }, limits).completion_window).toBe(5400);
    expect(validateRequest({ ...ok, completion_window: 30 }, limits).completion_window).toBe(30);
    expect(() => validateRequest({ ...ok, completion_window: '25h' }, limits)).toThrow(/INFERENCE_COMPLETION_WINDOW_SECONDS/);
  });
  it.each([
    ['body', []],
    ['model', { ...ok, model: 'x' }],
    ['list_inputs', { ...ok, list_inputs: ['a', 'b', 'c', 'd'] }],
    ['list_inputs', { ...ok, list_inputs: [] }],
    ['bucket_name', { ...ok, bucket_name: 'UPPER' }],
    ['session', { ...ok, session: 'a/b' }],
    ['max_tokens', { ...ok, max_tokens: 101 }],
    ['max_tokens', { ...ok, max_tokens: 1.5 }],
    ['structured_output', { ...ok, structured_output: '{not json' }],
    ['structured_output', { ...ok, structured_output: { type: 'object', properties: { a: { type: 'wrong' } } } }],
    ['input_json_file', { ...ok, input_json_file: '/etc/passwd' }],
    ['question', { ...ok, question: 3 }],
    ['seed', { ...ok, seed: 'x' }],
    ['completion_window', { ...ok, completion_window: '2d' }],
    ['completion_window', { ...ok, completion_window: 'soon' }],
    ['completion_window', { ...ok, completion_window: 0 }],
  ])('names %s', (field, body) => expect(fieldOf(body)).toBe(field));
});
