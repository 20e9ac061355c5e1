// In-process llama.cpp backend (node-llama-cpp 3.x, CPU): one loaded model and one context with N
// parallel sequences; concurrent completions share evaluation batches. JSON schemas become GBNF grammars (gbnf.ts).
import {
  getLlama, GeneralChatWrapper, LlamaChatSession, LlamaLogLevel, LlamaText, TokenBias,
  type Llama, type LlamaContext, type LlamaContextSequence, type LlamaGrammar, type LlamaModel, type Token,
} from 'node-llama-cpp';
import type { CompletionBackend, CompletionRequest, CompletionResult } from './types.js';
import { buildDemoVocab, DEMO_BACKEND_LABEL } from '../gguf-demo.js';
import { DEFAULT_LIMITS } from '../../core/limits.js';
import { GRAMMAR_END, schemaToGbnf, type GbnfConversion } from '../gbnf.js';

export interface LlamaBackendOptions {
  modelPath: string;
  threads: number;
  parallel: number;
  contextSize: number;
  chatWrapper: 'auto' | 'general';
  /** The generated random-weights model: ban raw byte tokens (keeps text valid UTF-8) and cap grammar lengths. */
  demo: boolean;
  /** Largest grammar of a schema (INFERENCE_GRAMMAR_MAX_SIZE); beyond it the generic JSON grammar is used. */
  grammarMaxSize?: number;
}

let llamaPromise: Promise<Llama> | undefined;
let llamaThreads = 0;

/** The process-wide llama.cpp binding, CPU only, with an explicit thread cap (its default is far too many on 2 cores). */
export function sharedLlama(threads: number): Promise<Llama> {
  if (!llamaPromise || llamaThreads !== threads) {
    llamaThreads = threads;
    llamaPromise = getLlama({ gpu: false, build: 'never', maxThreads: threads, logLevel: LlamaLogLevel.error, progressLogs: false });
  }
  return llamaPromise;
}

/** A fixed pool of context sequences; completions wait for a free one. */
class SequencePool {
  private free: LlamaContextSequence[] = [];
  private waiters: ((s: LlamaContextSequence) => void)[] = [];
  constructor(context: LlamaContext) {
    for (let i = 0; i < context.totalSequences; i++) this.free.push(context.getSequence());
  }
  acquire(): Promise<LlamaContextSequence> {
    const s = this.free.pop();
    return s ? Promise.resolve(s) : new Promise((resolve) => this.waiters.push(resolve));
  }
  release(s: LlamaContextSequence): void {
    const w = this.waiters.shift();
    if (w) w(s); else this.free.push(s);
  }
}

export class LlamaCppBackend implements CompletionBackend {
  readonly kind = 'llama-cpp';
  readonly label: string;
  readonly parallelism: number;
  readonly source: string;
  private grammars = new Map<string, Promise<LlamaGrammar>>();
  private tokenBias?: TokenBias;

  private constructor(private llama: Llama, private model: LlamaModel, private context: LlamaContext,
    private pool: SequencePool, private opts: LlamaBackendOptions) {
    this.parallelism = opts.parallel;
    this.source = opts.modelPath;
    this.label = opts.demo ? DEMO_BACKEND_LABEL : 'llama-cpp';
    if (opts.demo) this.tokenBias = byteTokenBan(model);
  }

  static async create(opts: LlamaBackendOptions): Promise<LlamaCppBackend> {
    const llama = await sharedLlama(opts.threads);
    const model = await llama.loadModel({ modelPath: opts.modelPath, gpuLayers: 0 });
    const context = await model.createContext({
      sequences: opts.parallel, contextSize: opts.contextSize * opts.parallel, threads: opts.threads,
      batchSize: Math.min(512, opts.contextSize * opts.parallel),
    });
    return new LlamaCppBackend(llama, model, context, new SequencePool(context), opts);
  }

  /** Loaded in-process: it answers once created. */
  async check(): Promise<void> { /* nothing to reach */ }

  async complete(req: CompletionRequest): Promise<CompletionResult> {
    const grammar = req.schema ? await this.grammarFor(req.schema) : undefined;
    const seq = await this.pool.acquire();
    const session = new LlamaChatSession({
      contextSequence: seq, autoDisposeSequence: false, systemPrompt: req.system ?? '',
      ...(this.opts.chatWrapper === 'general' ? { chatWrapper: new GeneralChatWrapper() } : {}),
    });
    const before = seq.tokenMeter.getState();
    try {
      const res = await session.promptWithMeta(req.prompt, {
        maxTokens: req.maxTokens, temperature: req.temperature ?? 0.8, seed: req.seed ?? 0,
        grammar, tokenBias: this.tokenBias, signal: req.signal, stopOnAbortSignal: false,
      });
      const after = seq.tokenMeter.getState();
      return {
        text: res.responseText,
        promptTokens: after.usedInputTokens - before.usedInputTokens,
        completionTokens: after.usedOutputTokens - before.usedOutputTokens,
        finishReason: res.stopReason === 'maxTokens' ? 'length' : 'stop',
      };
    } finally {
      try {
        session.dispose({ disposeSequence: false });
        await seq.clearHistory();
      } finally { this.pool.release(seq); }
    }
  }

  /**
   * The schema's own grammar (what it cannot enforce is validated afterwards by the caller); the generic JSON grammar
   * when the schema's grammar would be too large or llama.cpp refuses it.
   */
  private grammarFor(schema: Record<string, unknown>): Promise<LlamaGrammar> {
    const key = JSON.stringify(schema);
    let g = this.grammars.get(key);
    if (!g) {
      let conv: GbnfConversion;
      try {
        conv = schemaToGbnf(schema, { demo: this.opts.demo, maxSize: this.opts.grammarMaxSize ?? DEFAULT_LIMITS.inferenceGrammarMaxSize });
      } catch (e) { conv = { ok: false, reason: (e as Error).message }; }
      g = (conv.ok
        ? this.llama.createGrammar({ grammar: conv.grammar, stopGenerationTriggers: [LlamaText([GRAMMAR_END])], trimWhitespaceSuffix: true })
        : Promise.reject(new Error(conv.reason)))
        .catch(() => this.llama.getGrammarFor('json'));
      this.grammars.set(key, g);
    }
    return g;
  }

  async close(): Promise<void> {
    await this.context.dispose();
    await this.model.dispose();
  }
}

/** Demo model only: never sample its raw byte-fallback tokens (ids 3..258) but newline; grammars may still force them. */
function byteTokenBan(model: LlamaModel): TokenBias {
  const bias = new TokenBias(model.tokenizer);
  const vocab = buildDemoVocab();
  vocab.tokens.forEach((piece, id) => {
    if (/^<0x[0-9A-F]{2}>$/.test(piece) && piece !== '<0x0A>') bias.set(id as Token, 'never');
  });
  return bias;
}
