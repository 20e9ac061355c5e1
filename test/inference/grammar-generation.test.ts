// Real generation on the demo GGUF (node-llama-cpp, random weights) with schemas the old grammar path could only
// validate afterwards: a pattern, uuid and date-time formats, a wide integer range. With the GBNF of gbnf.ts every
// answer matches on the first attempt (no retries allowed), whatever the seed.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LlamaCppBackend } from '../../operator/inference/backends/llama.js';
import { ensureDemoModel } from '../../operator/inference/gguf-demo.js';
import { runItem } from '../../operator/inference/items.js';
import type { BatchRequest } from '../../operator/inference/request.js';

const dir = mkdtempSync(join(tmpdir(), 'inf-grammar-'));
let backend: LlamaCppBackend;
beforeAll(async () => {
  backend = await LlamaCppBackend.create({
    modelPath: ensureDemoModel(join(dir, 'models')), threads: 1, parallel: 2, contextSize: 512, chatWrapper: 'general', demo: true,
  });
}, 120_000);
afterAll(async () => { await backend?.close(); rmSync(dir, { recursive: true, force: true }); });

const request = (schema: Record<string, unknown>, seed: number): BatchRequest => ({
  model: 'llama2_7b', bucket_name: 'b', session: 's', storage_provider: 's3', return_output: true,
  max_tokens: 160, structured_output: schema, seed, question: 'Answer in JSON.',
});

describe('structured output enforced during generation (demo model)', () => {
  it.each<[string, Record<string, unknown>, (v: unknown) => void]>([
    ['a pattern', { type: 'string', pattern: '^[A-Z]{3}-[0-9]{2}$' }, (v) => expect(v).toMatch(/^[A-Z]{3}-[0-9]{2}$/)],
    ['a uuid', { type: 'string', format: 'uuid' }, (v) => expect(v).toMatch(/^[0-9a-f]{8}-([0-9a-f]{4}-){3}[0-9a-f]{12}$/i)],
    ['a date-time', { type: 'string', format: 'date-time' }, (v) => expect(Number.isNaN(Date.parse(v as string))).toBe(false)],
    ['an integer in 1000..250000', { type: 'integer', minimum: 1000, maximum: 250000 }, (v) => {
      expect(Number.isInteger(v)).toBe(true);
      expect(v as number).toBeGreaterThanOrEqual(1000);
      expect(v as number).toBeLessThanOrEqual(250000);
    }],
    ['an object of all four', {
      type: 'object', additionalProperties: false, required: ['code', 'id', 'at', 'n'],
      properties: {
        code: { type: 'string', pattern: '^[A-Z]{3}-[0-9]{2}$' }, id: { type: 'string', format: 'uuid' },
        at: { type: 'string', format: 'date-time' }, n: { type: 'integer', minimum: 1000, maximum: 250000 },
      },
    }, (v) => expect(Object.keys(v as object)).toEqual(['code', 'id', 'at', 'n'])],
  ])('%s: every answer validates on the first attempt', async (_name, schema, check) => {
    const outcomes = await Promise.all([0, 1, 2, 3, 4, 5].map((i) => runItem(backend, request(schema, 11 * i), `input ${i}`, i, 0)));
    for (const o of outcomes) {
      expect(o, JSON.stringify(o)).toMatchObject({ status: 'DONE' });
      check(o.output);
    }
    expect(new Set(outcomes.map((o) => JSON.stringify(o.output))).size).toBeGreaterThan(1); // sampled, not one fixed answer
  }, 120_000);

  it('generates with the generic JSON grammar when the schema grammar is over INFERENCE_GRAMMAR_MAX_SIZE', async () => {
    const small = await LlamaCppBackend.create({
      modelPath: ensureDemoModel(join(dir, 'models')), threads: 1, parallel: 1, contextSize: 512, chatWrapper: 'general', demo: true,
      grammarMaxSize: 100,
    });
    try {
      const schema = { type: 'string', pattern: '^[a-z]{900,1000}$' };
      const r = await small.complete({ prompt: 'x', maxTokens: 48, schema, seed: 3 });
      expect(r.completionTokens).toBeGreaterThan(0);
      // under the default limit the pattern is enforced: lower-case letters (900..1000 of them: the demo caps do not
      // apply to a pattern's bounded repetitions, so 48 tokens cannot finish it); under 100 elements it is not
      const enforced = await backend.complete({ prompt: 'x', maxTokens: 48, schema, seed: 3 });
      expect(enforced.text).toMatch(/^"[a-z]+$/);
      expect(r.text).toMatch(/^\{/); // node-llama-cpp's json.gbnf: root ::= object
    } finally { await small.close(); }
  }, 120_000);
});
