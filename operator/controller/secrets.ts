// Rendering with the embedded services: secrets from the environment (Kestra's convention: `SECRET_<NAME>` holding the
// base64 value; a plain value is accepted too), `kv()` from the KV store and `read()` from internal storage. Every
// secret value read is recorded so that logs and outputs can mask it.
import { limitsFromEnv } from '../core/limits.js';
import { createRenderer } from '../expr/index.js';
import type { Renderer } from '../core/engine-types.js';
import type { Stores } from '../store/types.js';

export interface SecretRenderer extends Renderer {
  /** A renderer that adds every secret value it reads to `sink`. */
  forSecrets(sink: Set<string>): Renderer;
}

export function secretFromEnv(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const raw = env[`SECRET_${name}`];
  if (raw === undefined) return undefined;
  const decoded = Buffer.from(raw, 'base64');
  const looksBase64 = /^[A-Za-z0-9+/]+={0,2}$/.test(raw) && raw.length % 4 === 0 && decoded.toString('base64') === raw;
  return looksBase64 ? decoded.toString('utf8') : raw;
}

/** `lookup` replaces the environment as the source of secrets (cluster mode: a Kubernetes Secret's cache). */
export function createSecretRenderer(stores: Stores, env: NodeJS.ProcessEnv = process.env, lookup?: (name: string) => string | undefined): SecretRenderer {
  let sink: Set<string> | undefined;
  const limits = limitsFromEnv(env); // EXPRESSION_TIMEOUT_MS, EXPRESSION_MAX_BYTES: the budget of each rendering
  const base = createRenderer({
    secret: lookup ?? ((name) => secretFromEnv(env, name)),
    onSecret: (value) => { sink?.add(value); },
    kv: (namespace, key) => {
      const entry = stores.kv.getSync(namespace, key);
      return entry ? { found: true, value: entry.value } : { found: false };
    },
    read: (uri) => stores.storage.getSync(uri).toString('utf8'),
  }, { timeoutMs: limits.expressionTimeoutMs, maxBytes: limits.expressionMaxBytes });
  const within = <T>(s: Set<string>, f: () => T): T => {
    const prev = sink;
    sink = s;
    try { return f(); } finally { sink = prev; }
  };
  return {
    render: (t, v) => base.render(t, v),
    renderTyped: (t, v) => base.renderTyped(t, v),
    renderValue: (t, v) => base.renderValue(t, v),
    forSecrets: (s) => ({
      render: (t, v) => within(s, () => base.render(t, v)),
      renderTyped: (t, v) => within(s, () => base.renderTyped(t, v)),
      renderValue: (t, v) => within(s, () => base.renderValue(t, v)),
    }),
  };
}
