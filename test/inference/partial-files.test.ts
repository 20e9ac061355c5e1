// The partial JSONL files of a job are removed once its final files exist, also when a part was written but its record
// was not committed (a crash between the two, or a failed checkpoint write in cluster mode): the one job runner over
// the SQLite job channel, a real s3rver and the scripted OpenAI-compatible model server.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { JobSecrets } from '../../operator/inference/auth.js';
import { BackendRegistry } from '../../operator/inference/backends/registry.js';
import { SqliteJobChannel } from '../../operator/inference/channel.js';
import { loadInferenceConfig } from '../../operator/inference/config.js';
import { JobStore } from '../../operator/inference/db.js';
import { validateRequest } from '../../operator/inference/request.js';
import { JobRunner } from '../../operator/inference/runner.js';
import { SecretBox } from '../../operator/secrets/sealed.js';
import { listKeys, MODELS_DIR, s3Env, startS3, type S3Fixture } from './helpers.js';
import { startModelServer, type ModelServer } from './model-server.js';

const TOKEN = 'partial-token-1';
let s3: S3Fixture;
let model: ModelServer;
let dir: string;

beforeAll(async () => { s3 = await startS3(['bucket']); model = await startModelServer(); dir = mkdtempSync(join(tmpdir(), 'inference-partial-')); });
afterAll(async () => { await model?.close(); await s3?.close(); rmSync(dir, { recursive: true, force: true }); });

/** Its first record of a written part fails, as if the process died right after the part's write. */
class FirstRecordLost extends SqliteJobChannel {
  lost = 0;
  override async markFlushed(idxs: number[], part: number): Promise<void> {
    if (this.lost++ === 0) throw new Error('lost before its commit');
    return super.markFlushed(idxs, part);
  }
}

it('removes a partial part whose record was never committed once the final files are written', async () => {
  const config = loadInferenceConfig({ ...s3Env(s3, [TOKEN]), INFERENCE_MODEL_FAKE: `openai:${model.url}`, INFERENCE_FLUSH_ITEMS: '1' });
  const secrets = new JobSecrets(new SecretBox(Buffer.alloc(32, 3)));
  const store = new JobStore(join(dir, 'inference.db'), secrets);
  const backends = new BackendRegistry(config, MODELS_DIR);
  try {
    const id = 'a'.repeat(32);
    const req = validateRequest({ model: 'fake', bucket_name: 'bucket', session: 'lost', list_inputs: ['one'] }, {
      modelIds: Object.keys(config.models), maxInputs: 10, maxTokens: 16, defaultMaxTokens: 8, completionWindowSeconds: 3600,
    });
    const now = new Date();
    store.create({
      id, token_hash: secrets.tokenHash(TOKEN), idempotency_key: null, request_hash: 'h', request: JSON.stringify(req),
      folder_sealed: secrets.seal(`${TOKEN}/lost`, id), session: 'lost', created: now.toISOString(), expires_at: new Date(now.getTime() + 3_600_000).toISOString(),
    });
    const channel = new FirstRecordLost(store, secrets, id);
    await new JobRunner(backends, config).run(channel);
    expect(channel.lost).toBe(1); // the part was written, its record lost
    expect(store.status(id)).toMatchObject({ status: 'SUCCESS', done: 1 });
    const keys = await listKeys(s3.client, 'bucket', `${TOKEN}/lost/`);
    expect(keys.filter((k) => k.includes('-partial/'))).toEqual([]);
    expect(keys.some((k) => k.endsWith('-output.jsonl'))).toBe(true);
  } finally {
    await backends.close();
    store.close();
  }
}, 60_000);
