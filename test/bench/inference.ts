// Inference benchmark (npm run bench): tokens/s of a 64-input job through the whole API path (HTTP, job store,
// worker, S3 result) against node-llama-cpp called directly with the same model, prompts, seeds and batch; the
// gain of batched over one-at-a-time generation; submit-to-SUCCESS latency of a 4-input job. Knobs:
// INFERENCE_BENCH_ROUNDS (default 8), INFERENCE_BENCH_MIN_POLL_MS (2), INFERENCE_BENCH_PIN=0 (run unpinned).
import { execFileSync } from 'node:child_process';
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { getLlama, GeneralChatWrapper, LlamaChatSession, LlamaLogLevel, TokenBias, type LlamaContextSequence, type Token } from 'node-llama-cpp';
import { defaultThreads } from '../../operator/inference/config.js';
import { buildDemoVocab, ensureDemoModel } from '../../operator/inference/gguf-demo.js';
import { itemSeed, promptFor } from '../../operator/inference/items.js';
import type { BatchRequest } from '../../operator/inference/request.js';
import { MODELS_DIR, s3Env, startS3, startService } from '../inference/helpers.js';

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

/**
 * The client runs in a worker thread (its own event loop, as a separate client program would). It polls get_result
 * adaptively, as a client that wants the SUCCESS promptly without loading the service would: the wait is a quarter of the
 * remaining time estimated from `progress` (a quarter of the elapsed time before any item is done), between
 * MIN_POLL_MS and 250 ms, and MIN_POLL_MS once every item is done (the result file is being written). Each poll
 * costs the service an HTTP request on the event loop that drives generation: polling every 5 ms throughout made
 * the 64-input job ~40% slower on a 2-core machine.
 */
const MIN_POLL_MS = Number(process.env.INFERENCE_BENCH_MIN_POLL_MS ?? 2);
const CLIENT_JS = `
const { parentPort } = require('node:worker_threads');
function nextWait(res, elapsed, minMs) {
  const p = res.progress ?? {};
  const finished = (p.done ?? 0) + (p.failed ?? 0);
  let wait = elapsed / 4;
  if (p.total && finished >= p.total) wait = minMs;
  else if (p.total && finished > 0) wait = (elapsed * (p.total - finished) / finished) / 4;
  return Math.min(250, Math.max(minMs, wait));
}
parentPort.on('message', async ({ url, token, body, minMs }) => {
  try {
    const wall = Date.now(), t0 = performance.now();
    const sub = await fetch(url + '/v1/completions', { method: 'POST', body: JSON.stringify(body),
      headers: { 'content-type': 'application/json', authorization: 'Bearer ' + token } });
    const { task_id } = await sub.json();
    let polls = 0;
    for (;;) {
      polls++;
      const res = await (await fetch(url + '/get_result/' + task_id)).json();
      if (res.status === 'SUCCESS' || res.status === 'FAILED') {
        parentPort.postMessage({ ms: performance.now() - t0, wall, polls, res });
        return;
      }
      await new Promise((r) => setTimeout(r, nextWait(res, performance.now() - t0, minMs)));
    }
  } catch (e) { parentPort.postMessage({ error: String(e) }); }
});`;

interface ApiRun extends Run { queueMs: number; runMs: number; observeMs: number; polls: number }

function startClient(url: string): { run(body: BatchRequest): Promise<ApiRun>; close(): Promise<number> } {
  const worker = new Worker(CLIENT_JS, { eval: true });
  return {
    run: (body) => new Promise((resolve, reject) => {
      worker.once('message', (m: { error?: string; ms: number; wall: number; polls: number; res: any }) => {
        if (m.error || m.res.status !== 'SUCCESS') return reject(new Error(`bench job failed: ${m.error ?? m.res.error}`));
        const started = Date.parse(m.res.started), finished = Date.parse(m.res.finished);
        resolve({
          tokens: m.res.tokens.completion, seconds: m.ms / 1000, polls: m.polls,
          queueMs: started - m.wall, runMs: finished - started, observeMs: m.wall + m.ms - finished,
        });
      });
      worker.postMessage({ url, token: TOKEN, body, minMs: MIN_POLL_MS });
    }),
    close: () => worker.terminate(),
  };
}

const ROUNDS = Number(process.env.INFERENCE_BENCH_ROUNDS ?? 8);
const best = <T extends Run>(runs: T[]): T => runs.reduce((a, b) => (rate(b) > rate(a) ? b : a));
const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b), m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
};

/**
 * Rounds interleave the measurements, alternating which of the API job and the direct run goes first, so that
 * load from other processes on a shared machine biases neither. Reported: the best round of each, and the median
 * of the per-round ratios (each round's API and direct runs are adjacent, so they share the machine's state).
 *
 * Pinning. With 1 llama.cpp thread every decode and every sampled token is a hand-off between Node's main thread and a
 * libuv pool thread. On this 2-vCPU VM a hand-off across vCPUs (waking an idle one) costs more than the tiny
 * model's work: the same run varies ~2x with where the scheduler puts the threads. Pinning the whole process
 * (both paths, and the client thread) to one CPU makes the figures repeatable (and ~1.8x higher for both).
 * INFERENCE_BENCH_PIN=0 measures unpinned.
 */
export async function runInferenceBench(): Promise<void> {
  const before = affinityMask();
  const pinned = process.env.INFERENCE_BENCH_PIN !== '0' && before !== undefined && availableParallelism() > 1 &&
    taskset(['-c', '0']);
  try { await bench(pinned); } finally { if (pinned) taskset([before!]); }
}

/** The process's CPU affinity mask (hex, as `taskset -p` prints it), or undefined without taskset. */
function affinityMask(): string | undefined {
  try { return /:\s*([0-9a-f]+)\s*$/.exec(execFileSync('taskset', ['-p', String(process.pid)], { encoding: 'utf8' }))?.[1]; } catch { return undefined; }
}

/** Applies to every thread of the process (`-a`); threads created later inherit it. */
function taskset(args: string[]): boolean {
  try { execFileSync('taskset', ['-a', '-p', ...args, String(process.pid)], { stdio: 'ignore' }); return true; } catch { return false; }
}

async function bench(pinned: boolean): Promise<void> {
  const s3 = await startS3(['bench']);
  const svc = await startService(() => ({ ...s3Env(s3, [TOKEN]), INFERENCE_THREADS: String(THREADS) }));
  const client = startClient(svc.url);
  const batched = await directRunner(PARALLEL);
  const single = await directRunner(1);
  try {
    // Not measured: loads the service's model, then warms both paths alike with a full-size run each (JIT, caches).
    // Round 0 (API first) still tends to be the lowest ratio; the median of rounds is the figure to trust.
    await client.run({ ...request, list_inputs: ['warm'], max_tokens: 2, session: 'load' });
    await client.run({ ...request, session: 'warm' });
    await batched.run(INPUTS);
    await single.run(4);
    const api: ApiRun[] = [], direct: Run[] = [], one: Run[] = [], latency: ApiRun[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const apiJob = async (): Promise<void> => { api.push(await client.run({ ...request, session: `round${r}` })); };
      const directJob = async (): Promise<void> => { direct.push(await batched.run(INPUTS)); };
      if (r % 2 === 0) { await apiJob(); await directJob(); } else { await directJob(); await apiJob(); }
      one.push(await single.run(16));
      latency.push(await client.run({ ...request, list_inputs: inputs.slice(0, 4), session: `lat${r}` }));
    }
    report(api, direct, one, latency, pinned);
  } finally {
    await client.close();
    await batched.close();
    await single.close();
    await svc.close();
    await s3.close();
  }
}

function report(api: ApiRun[], direct: Run[], one: Run[], latency: ApiRun[], pinned: boolean): void {
  const [a, d, o] = [best(api), best(direct), best(one)];
  const f = (n: number): string => n.toFixed(1);
  const ratios = api.map((x, i) => rate(x) / rate(direct[i]));
  const gains = direct.map((x, i) => rate(x) / rate(one[i]));
  const ms = (n: number): string => `${n.toFixed(0)} ms`;
  console.log(`inference bench (demo-random-weights GGUF, ${THREADS} threads, ${PARALLEL} parallel sequences, max_tokens ${MAX_TOKENS}, best of ${ROUNDS}, ` +
    `${pinned ? 'process pinned to CPU 0; INFERENCE_BENCH_PIN=0 to unpin' : 'unpinned: expect ~±15% per-round noise from cross-CPU thread wake-ups'})`);
  console.log(`  API path, ${INPUTS}-input job:          ${f(rate(a))} tokens/s (${a.tokens} tokens in ${f(a.seconds)} s, submit to SUCCESS)`);
  console.log(`    client thread polling get_result adaptively (>= ${MIN_POLL_MS} ms): queued ${ms(a.queueMs)}, running ${ms(a.runMs)}, ` +
    `SUCCESS seen ${ms(a.observeMs)} after it was recorded (${a.polls} polls)`);
  console.log(`  node-llama-cpp direct, same batch:    ${f(rate(d))} tokens/s (${d.tokens} tokens in ${f(d.seconds)} s)`);
  console.log(`  ratio API / direct:                   ${(rate(a) / rate(d)).toFixed(2)} best/best, ${median(ratios).toFixed(2)} median of rounds ` +
    `(${ratios.map((r) => r.toFixed(2)).join(', ')}) (target >= 0.9)`);
  console.log(`  one-at-a-time direct (16 inputs):     ${f(rate(o))} tokens/s`);
  console.log(`  batched / one-at-a-time gain:         ${(rate(d) / rate(o)).toFixed(2)}x best/best, ${median(gains).toFixed(2)}x median of rounds`);
  console.log('    (why not ~2x: the demo model is 2 layers x 128 wide, its weights sit in CPU cache, so a decode\'s compute grows');
  console.log('     with its tokens (a 4-token decode cost ~2.2x a 1-token one when measured) and most of a token\'s cost does not');
  console.log('     batch: node-llama-cpp samples each token in its own async native call (a thread hand-off) and runs its JS');
  console.log('     per token. Batching saves a decode call per step, worth more unpinned where hand-offs cross vCPUs. Real');
  console.log('     models are memory-bound per decode: there one batched step reads the weights once for every sequence.)');
  const l = latency.map((x) => x.seconds * 1000);
  console.log(`  4-input job submit-to-SUCCESS:        best ${Math.min(...l).toFixed(0)} ms (all: ${l.map((x) => x.toFixed(0)).join(', ')} ms)`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await runInferenceBench();
  process.exit(0);
}
