// Model registry at run time: creates each configured backend lazily and shares one loaded GGUF between
// the model ids that map to the same file (out of the box all six ids share the demo model).
import type { InferenceConfig, ModelConfig } from '../config.js';
import { ensureDemoModel } from '../gguf-demo.js';
import { LlamaCppBackend } from './llama.js';
import { OpenAICompatibleBackend } from './openai.js';
import type { CompletionBackend } from './types.js';

export class BackendRegistry {
  private byKey = new Map<string, Promise<CompletionBackend>>();

  constructor(private config: InferenceConfig, private modelsDir: string) {}

  has(modelId: string): boolean { return modelId in this.config.models; }

  ids(): string[] { return Object.keys(this.config.models); }

  get(modelId: string): Promise<CompletionBackend> {
    const mc = this.config.models[modelId];
    if (!mc) return Promise.reject(new Error(`unknown model '${modelId}'`));
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
    });
  }

  async close(): Promise<void> {
    const all = [...this.byKey.values()];
    this.byKey.clear();
    for (const b of all) await b.then((x) => x.close(), () => undefined);
  }
}
