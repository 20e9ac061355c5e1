// Model registry at run time: creates each configured backend lazily and shares one loaded GGUF between
// the model ids that map to the same file (out of the box all six ids share the demo model).
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { InferenceConfig, ModelConfig } from '../config.js';
import { DEFAULT_DEMO_SHAPE, DEMO_BACKEND_LABEL, demoModelFileName, ensureDemoModel } from '../gguf-demo.js';
import { LlamaCppBackend } from './llama.js';
import { OpenAICompatibleBackend } from './openai.js';
import type { CompletionBackend, ModelDetails } from './types.js';

export class BackendRegistry {
  private byKey = new Map<string, Promise<CompletionBackend>>();

  constructor(private config: InferenceConfig, private modelsDir: string) {}

  has(modelId: string): boolean { return modelId in this.config.models; }

  ids(): string[] { return Object.keys(this.config.models); }

  /** What serves `modelId`, from configuration alone (nothing is loaded or called). */
  details(modelId: string): ModelDetails | undefined {
    const mc = this.config.models[modelId];
    if (!mc) return undefined;
    if (mc.backend === 'openai') return { backend: 'openai-compatible', url: `${mc.baseUrl.replace(/\/+$/, '')}#${mc.model ?? modelId}`, context_size: null };
    const demo = mc.modelPath === 'demo';
    return {
      backend: demo ? DEMO_BACKEND_LABEL : 'llama-cpp', file: demo ? join(this.modelsDir, demoModelFileName(DEFAULT_DEMO_SHAPE)) : mc.modelPath,
      context_size: mc.contextSize ?? (demo ? 1024 : 4096),
    };
  }

  /** Why `modelId` cannot be served at all, when that is cheap to know (a GGUF file that does not exist); else undefined. */
  unavailable(modelId: string): string | undefined {
    const mc = this.config.models[modelId];
    if (mc?.backend === 'llama-cpp' && mc.modelPath !== 'demo' && !existsSync(mc.modelPath)) {
      return `model '${modelId}' maps to the GGUF file '${mc.modelPath}', which does not exist`;
    }
    return undefined;
  }

  get(modelId: string): Promise<CompletionBackend> {
    const mc = this.config.models[modelId];
    if (!mc) return Promise.reject(new Error(`unknown model '${modelId}'`));
    const missing = this.unavailable(modelId);
    if (missing) return Promise.reject(new Error(missing));
    const key = mc.backend === 'llama-cpp' ? `llama:${mc.modelPath}:${mc.parallel ?? ''}:${mc.contextSize ?? ''}` : `openai:${modelId}`;
    let b = this.byKey.get(key);
    if (!b) {
      b = this.create(modelId, mc);
      b.catch(() => this.byKey.delete(key));
      this.byKey.set(key, b);
    }
    return b;
  }

  private create(modelId: string, mc: ModelConfig): Promise<CompletionBackend> {
    if (mc.backend === 'openai') {
      return Promise.resolve(new OpenAICompatibleBackend({
        baseUrl: mc.baseUrl, model: mc.model ?? modelId, apiKey: mc.apiKey, concurrency: mc.concurrency ?? 8,
        retries: this.config.modelRetries, timeoutMs: this.config.requestTimeoutSeconds * 1000,
      }));
    }
    const demo = mc.modelPath === 'demo';
    return LlamaCppBackend.create({
      modelPath: demo ? ensureDemoModel(this.modelsDir) : mc.modelPath,
      threads: this.config.threads,
      parallel: mc.parallel ?? 4,
      contextSize: mc.contextSize ?? (demo ? 1024 : 4096),
      chatWrapper: mc.chatWrapper ?? (demo ? 'general' : 'auto'),
      demo,
      grammarMaxSize: this.config.grammarMaxSize,
    });
  }

  async close(): Promise<void> {
    const all = [...this.byKey.values()];
    this.byKey.clear();
    for (const b of all) await b.then((x) => x.close(), () => undefined);
  }
}
