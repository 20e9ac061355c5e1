// Rendering with the embedded services: secrets from the environment (Kestra's convention: `SECRET_<NAME>` holding the
// base64 value; a plain value is accepted too; operator/secrets/env.ts), `kv()` from the KV store and `read()` from
// internal storage. Every secret value read is reported to a sink (the secret layer masks it in what the reader writes).
import { createRenderer } from '../expr/index.js';
import type { Renderer } from '../core/engine-types.js';
import { secretFromEnv } from '../secrets/env.js';
import type { KVEntry, Stores } from '../store/types.js';

export { secretFromEnv };

export interface SecretRenderer extends Renderer {
  /** A renderer that adds every secret value it reads to `sink`. */
  forSecrets(sink: { add(value: string): unknown }): Renderer;
}

/** Where `kv()`, `read()` and `now()` read, when not from the stores' synchronous reads and the system clock. */
export interface RenderSources {
  kv?(namespace: string, key: string): KVEntry | undefined;
  read?(uri: string): Buffer;
  now?(): Date;
}

/**
 * `lookup` replaces the environment as the source of secrets (cluster mode: a Kubernetes Secret's cache). `sources`
 * replaces the stores' synchronous reads and the clock (the engine's step: values prefetched, its injected clock).
 */
export function createSecretRenderer(stores: Stores, env: NodeJS.ProcessEnv = process.env, lookup?: (name: string) => string | undefined, sources: RenderSources = {}): SecretRenderer {
  let sink: { add(value: string): unknown } | undefined;
  const base = createRenderer({
    secret: lookup ?? ((name) => secretFromEnv(env, name)),
    onSecret: (value) => { sink?.add(value); },
    kv: (namespace, key) => {
      const entry = sources.kv ? sources.kv(namespace, key) : stores.kv.getSync(namespace, key);
      return entry ? { found: true, value: entry.value } : { found: false };
    },
    read: (uri) => (sources.read ? sources.read(uri) : stores.storage.getSync(uri)).toString('utf8'),
    ...(sources.now ? { now: sources.now } : {}),
  });
  const within = <T>(s: { add(value: string): unknown }, f: () => T): T => {
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
