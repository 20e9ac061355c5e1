// Inference benchmark (npm run bench): tokens/s of a 64-input job through the whole API path (HTTP, job store,
// worker, S3 result) against node-llama-cpp called directly with the same model, prompts, seeds and batch; the
// gain of batched over one-at-a-time generation; submit-to-SUCCESS latency of a 4-input job.
import { getLlama, GeneralChatWrapper, LlamaChatSession, LlamaLogLevel, TokenBias, type LlamaContextSequence, type Token } from 'node-llama-cpp';
import { defaultThreads } from '../../operator/inference/config.js';
import { buildDemoVocab, ensureDemoModel } from '../../operator/inference/gguf-demo.js';
import { itemSeed, promptFor } from '../../operator/inference/items.js';
import type { BatchRequest } from '../../operator/inference/request.js';
import { MODELS_DIR, postJson, s3Env, startS3, startService } from '../inference/helpers.js';

const TOKEN = 'bench-token';
const INPUTS = 64;
const MAX_TOKENS = 96;
const PARALLEL = 4;
const THREADS = defaultThreads();

const inputs = Array.from({ length: INPUTS }, (_, i) => `customer review number ${i}: the product is fine`);
const request: BatchRequest = {
  model: 'llama2_7b', question: 'What is the sentiment?', list_inputs: inputs, storage_provider: 's3',
  bucket_name: 'bench', session: 'bench', max_tokens: MAX_TOKENS, return_output: false,
};

interface Run { tokens: number; seconds: number }
const rate = (r: Run): number => r.tokens / r.seconds;

interface Direct { run(count: number): Promise<Run>; close(): Promise<void> }

/** node-llama-cpp directly: `sequences` parallel chat sessions over the same prompts and seeds as the service. */
async function directRunner(sequences: number): Promise<Direct> {
  const llama = await getLlama({ gpu: false, build: 'never', maxThreads: THREADS, logLevel: LlamaLogLevel.error, progressLogs: false });
  const model = await llama.loadModel({ modelPath: ensureDemoModel(MODELS_DIR), gpuLayers: 0 });
  const context = await model.createContext({ sequences, contextSize: 1024 * sequences, threads: THREADS, batchSize: Math.min(512, 1024 * sequences) });
  const bias = new TokenBias(model.tokenizer);
  buildDemoVocab().tokens.forEach((p, id) => { if (/^<0x[0-9A-F]{2}>$/.test(p) && p !== '<0x0A>') bias.set(id as Token, 'never'); });
  const seqs: LlamaContextSequence[] = Array.from({ length: sequences }, () => context.getSequence());
  return {
    async run(count) {
      const queue = Array.from({ length: count }, (_, i) => i);
      let tokens = 0;
      const t0 = performance.now();
      await Promise.all(seqs.map(async (seq) => {
        for (let i = queue.shift(); i !== undefined; i = queue.shift()) {
          const p = promptFor(request, inputs[i]);
          const session = new LlamaChatSession({ contextSequence: seq, autoDisposeSequence: false, systemPrompt: '', chatWrapper: new GeneralChatWrapper() });
          const before = seq.tokenMeter.usedOutputTokens;
          await session.promptWithMeta(p.prompt, { maxTokens: MAX_TOKENS, temperature: 0.8, seed: itemSeed(request, i, 0), tokenBias: bias });
          tokens += seq.tokenMeter.usedOutputTokens - before;
          session.dispose({ disposeSequence: false });
          await seq.clearHistory();
        }
      }));
      return { tokens, seconds: (performance.now() - t0) / 1000 };
    },
    async close() { await context.dispose(); await model.dispose(); },
  };
}

async function waitDone(url: string, taskId: string): Promise<any> {
  for (;;) {
    const body = await (await fetch(`${url}/get_result/${taskId}`)).json() as { status: string };
    if (body.status === 'SUCCESS' || body.status === 'FAILED') return body;
    await new Promise((r) => setTimeout(r, 25));
  }
}

const ROUNDS = 5;
const best = (runs: Run[]): Run => runs.reduce((a, b) => (rate(b) > rate(a) ? b : a));

async function apiRun(url: string, body: BatchRequest): Promise<Run> {
  const t0 = performance.now();
  const sub = await postJson(`${url}/v1/completions`, body, { authorization: `Bearer ${TOKEN}` });
  const res = await waitDone(url, sub.body.task_id);
  if (res.status !== 'SUCCESS') throw new Error(`bench job failed: ${res.error}`);
  return { tokens: res.tokens.completion, seconds: (performance.now() - t0) / 1000 };
}

/**
 * Rounds interleave the three measurements and the best round of each is reported, so that load from other
 * processes on a shared machine biases none of them.
 */
export async function runInferenceBench(): Promise<void> {
  const s3 = await startS3(['bench']);
  const svc = await startService(() => ({ ...s3Env(s3, [TOKEN]), INFERENCE_THREADS: String(THREADS) }));
  const batched = await directRunner(PARALLEL);
  const single = await directRunner(1);
  try {
    await apiRun(svc.url, { ...request, list_inputs: ['warm'], max_tokens: 2 }); // loads the model (not measured)
    const api: Run[] = [], direct: Run[] = [], one: Run[] = [], latency: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      api.push(await apiRun(svc.url, { ...request, session: `round${r}` }));
      direct.push(await batched.run(INPUTS));
      one.push(await single.run(16));
      latency.push((await apiRun(svc.url, { ...request, list_inputs: inputs.slice(0, 4), session: `lat${r}` })).seconds * 1000);
    }
    const [a, d, o] = [best(api), best(direct), best(one)];
    const f = (n: number): string => n.toFixed(1);
    console.log(`inference bench (demo-random-weights GGUF, ${THREADS} threads, ${PARALLEL} parallel sequences, max_tokens ${MAX_TOKENS}, best of ${ROUNDS})`);
    console.log(`  API path, ${INPUTS}-input job:          ${f(rate(a))} tokens/s (${a.tokens} tokens in ${f(a.seconds)} s, submit to SUCCESS)`);
    console.log(`  node-llama-cpp direct, same batch:    ${f(rate(d))} tokens/s (${d.tokens} tokens in ${f(d.seconds)} s)`);
    console.log(`  ratio API / direct:                   ${(rate(a) / rate(d)).toFixed(2)} (target >= 0.9)`);
    console.log(`  one-at-a-time direct (16 inputs):     ${f(rate(o))} tokens/s`);
    console.log(`  batched / one-at-a-time gain:         ${(rate(d) / rate(o)).toFixed(2)}x`);
    console.log(`  4-input job submit-to-SUCCESS:        best ${Math.min(...latency).toFixed(0)} ms (all: ${latency.map((l) => l.toFixed(0)).join(', ')} ms)`);
  } finally {
    await batched.close();
    await single.close();
    await svc.close();
    await s3.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await runInferenceBench();
  process.exit(0);
}
