// End to end: the contract's quickstart flow (examples/inference/quickstart.yaml) on the embedded engine, with the
// inference service and a real S3-protocol server (s3rver): HTTP Request submits, a shell script polls, S3
// Download reads the result file. The poll interval is a flow input, shortened here.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { getRunnable } from '../../operator/plugins/index.js';
import { startEmbedded, type Embedded } from '../support/embedded.js';
import { readObject, S3_KEY, s3Env, startS3, startService, type S3Fixture, type ServiceFixture } from './helpers.js';

const TOKEN = 'quickstart-token-1234';
const FLOW = readFileSync(join(import.meta.dirname, '../../examples/inference/quickstart.yaml'), 'utf8');
const b64 = (s: string): string => Buffer.from(s).toString('base64');

let s3: S3Fixture;
let svc: ServiceFixture;
let engine: Embedded;

beforeAll(async () => {
  s3 = await startS3(['quickstart-bucket']);
  svc = await startService(() => s3Env(s3, [TOKEN]));
  engine = await startEmbedded({
    PATH: process.env.PATH, SECRET_INFERENCE_ACCESS_TOKEN: b64(TOKEN), SECRET_AWS_ACCESS_KEY_ID: b64(S3_KEY), SECRET_AWS_SECRET_ACCESS_KEY: b64(S3_KEY),
  });
});
afterAll(async () => { await engine?.close(); await svc?.close(); await s3?.close(); });

it('runs the quickstart flow against s3rver and the inference API', async () => {
  // The flow's task types are registered plugins (a missing one fails here, not as a skipped test).
  for (const type of ['ai.service.plugin.core.http.Request', 'ai.service.plugin.scripts.shell.Script', 'ai.service.plugin.aws.s3.Download']) expect(getRunnable(type), type).toBeDefined();
  const inputs = ['Great launch, customers love it', 'Prices went up again', 'The report is out'];
  await s3.client.putObject('quickstart-bucket', `${TOKEN}/qs/inputs.json`, JSON.stringify(inputs));
  await engine.createFlow(FLOW);
  const exec = await engine.execute('company.inference', 'batch-inference-quickstart', 'create', {
    inference_url: svc.url, model: 'llama2_7b', bucket: 'quickstart-bucket', session: 'qs', s3_endpoint: s3.endpoint,
    max_tokens: 8, poll_interval_seconds: 1, max_wait_seconds: 120,
  });
  const done = await engine.waitFor(exec.id, (e) => ['SUCCESS', 'FAILED', 'WARNING', 'KILLED'].includes(e.state.current), 150_000);
  expect(done.state.current).toBe('SUCCESS');
  const runs = Object.fromEntries(done.taskRunList.map((t: { taskId: string }) => [t.taskId, t]));
  expect(runs.poll.outputs.exitCode).toBe(0);
  const file = runs.poll.outputs.vars.result_file as string;
  expect(file).toMatch(/^result-.*\.json$/);
  const doc = JSON.parse(await readObject(s3.client, 'quickstart-bucket', `${TOKEN}/qs/${file}`));
  expect(doc.counts).toEqual({ total: 3, done: 3, failed: 0, not_generated: 0 });
  expect(doc.results.map((r: { input: string }) => r.input)).toEqual(inputs);
  expect(done.outputs.result_uri).toMatch(/^kestra:\/\//);
}, 180_000);
