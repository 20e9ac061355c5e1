// Rendering with the embedded services: secrets from the environment (Kestra's convention: `SECRET_<NAME>` holding the
// base64 value; a plain value is accepted too; operator/secrets/env.ts), `kv()` from the KV store and `read()` from
// internal storage. Every secret value read is reported to a sink (the secret layer masks it in what the reader writes).
// `read('a/b.txt')` reads a namespace file (its `kestra:///<ns>/_files/...` URI).
// `kv()` and `read()` reach only what the rendering's owner may reach (operator/tenancy): a task attempt passes its
// execution's views; any other rendering (triggers, webhooks) is held to the namespace of the flow it renders for.
// Each rendering has the budget of EXPRESSION_TIMEOUT_MS and EXPRESSION_MAX_BYTES (operator/expr/budget.ts).
import { limitsFromEnv } from '../core/limits.js';
import { createRenderer, ExpressionError } from '../expr/index.js';
import type { Renderer } from '../core/engine-types.js';
import { secretFromEnv } from '../secrets/env.js';
import { envsVariable } from '../secrets/exposed-env.js';
import type { InternalStorage, KVEntry, KVStore, Stores } from '../store/types.js';
import { namespaceFileUri } from '../storage/paths.js';
import { fileReadDenied } from '../tenancy/files.js';
import { namespaceDenied, namespaceGrantsFromEnv } from '../tenancy/namespaces.js';
import { KvAccessError } from '../tenancy/scoped-kv.js';
import { StorageAccessError } from '../tenancy/scoped-storage.js';

export { secretFromEnv };

/** What a rendering may read through `kv()`, `read()` and the file functions: a task attempt's scoped views (run-context.ts). */
export interface RenderViews {
  kv: Pick<KVStore, 'getSync'>;
  storage: Pick<InternalStorage, 'getSync' | 'statSync'>;
  /** A task attempt's `errorLogs()`: its execution's ERROR lines, read before the attempt started. */
  errorLogs?(): unknown[];
}

export interface SecretRenderer extends Renderer {
  /** A renderer that adds every secret value it reads to `sink`, and reads KV and files through `views`. */
  forSecrets(sink: { add(value: string): unknown }, views?: RenderViews): Renderer;
}

/** Where `kv()`, `read()`, the file functions and `now()` read, when not from the stores' synchronous reads and the system clock. */
export interface RenderSources {
  kv?(namespace: string, key: string): KVEntry | undefined;
  read?(uri: string): Buffer;
  stat?(uri: string): number | undefined;
  now?(): Date;
}

type RenderOp = 'render' | 'renderTyped' | 'renderValue';

/** The namespace a rendering is for, from the variables the caller built (never from the template). */
function namespaceOf(vars: Record<string, unknown>): string | undefined {
  const flow = vars.flow as { namespace?: unknown } | undefined;
  return typeof flow?.namespace === 'string' ? flow.namespace : undefined;
}

/**
 * `lookup` replaces the environment as the source of secrets (cluster mode: a Kubernetes Secret's cache). `sources`
 * replaces the stores' synchronous reads and the clock (the engine's step: values prefetched, its injected clock).
 */
export function createSecretRenderer(stores: Stores, env: NodeJS.ProcessEnv = process.env, lookup?: (name: string) => string | undefined, sources: RenderSources = {}): SecretRenderer {
  const grants = namespaceGrantsFromEnv(env);
  const limits = limitsFromEnv(env); // EXPRESSION_TIMEOUT_MS, EXPRESSION_MAX_BYTES: the budget of each rendering
  let sink: { add(value: string): unknown } | undefined;
  let views: RenderViews | undefined;
  let namespace: string | undefined;
  const namespaceReadable = (uri: string): string => {
    const denied = namespace === undefined ? `read(): no namespace to read '${uri}' for` : fileReadDenied({ namespace, related: () => [] }, uri, grants);
    if (denied) throw new StorageAccessError(denied);
    return uri;
  };
  /** Outside a task attempt: the KV and files of the rendering's namespace only (or those ALLOWED_NAMESPACES grants). */
  const namespaceViews: RenderViews = {
    kv: { getSync: (ns, key) => {
      const denied = namespace === undefined ? `kv(): no namespace to read KV key '${key}' for` : namespaceDenied(namespace, ns, `KV key '${key}'`, grants);
      if (denied) throw new KvAccessError(denied);
      return stores.kv.getSync(ns, key);
    } },
    storage: {
      getSync: (uri) => stores.storage.getSync(namespaceReadable(uri)),
      statSync: (uri) => stores.storage.statSync(namespaceReadable(uri)),
    },
  };
  // A namespace file is read through its URI, so the same rules (operator/tenancy) hold for both forms.
  const uriOf = (path: string, ns: string | undefined): string => (ns === undefined ? path : namespaceFileUri(ns, path));
  const base = createRenderer({
    secret: lookup ?? ((name) => secretFromEnv(env, name)),
    onSecret: (value) => { sink?.add(value); },
    kv: (ns, key) => {
      const entry = sources.kv ? sources.kv(ns, key) : (views ?? namespaceViews).kv.getSync(ns, key);
      return entry ? { found: true, value: entry.value } : { found: false };
    },
    read: (path, ns) => {
      const uri = uriOf(path, ns);
      return (sources.read ? sources.read(uri) : (views ?? namespaceViews).storage.getSync(uri)).toString('utf8');
    },
    stat: (path, ns) => {
      const uri = uriOf(path, ns);
      return sources.stat ? sources.stat(uri) : (views ?? namespaceViews).storage.statSync(uri);
    },
    errorLogs: () => {
      if (!views?.errorLogs) throw new ExpressionError("The 'errorLogs' function can only be used in runnable tasks, as it reads logs from the log store");
      return views.errorLogs();
    },
    ...(sources.now ? { now: sources.now } : {}),
  }, { timeoutMs: limits.expressionTimeoutMs, maxBytes: limits.expressionMaxBytes });
  // Kestra's `envs` (operator/secrets/exposed-env.ts): added to the variables only when FLOW_ENV_VARS_PREFIX exposes some.
  const envs = envsVariable(env);
  const withEnvs = Object.keys(envs).length === 0 ? (vars: Record<string, unknown>) => vars
    : (vars: Record<string, unknown>) => (vars.envs === undefined ? { ...vars, envs } : vars);
  /** Runs one top-level rendering with its secret sink, its views and the namespace of its variables. */
  const within = (s: typeof sink, v: RenderViews | undefined, op: RenderOp, t: unknown, vars: Record<string, unknown>): unknown => {
    const prevSink = sink, prevViews = views, prevNamespace = namespace;
    sink = s; views = v; namespace = namespaceOf(vars);
    try {
      const all = withEnvs(vars);
      return op === 'render' ? base.render(t as string, all) : op === 'renderTyped' ? base.renderTyped(t, all) : base.renderValue(t, all);
    } finally { sink = prevSink; views = prevViews; namespace = prevNamespace; }
  };
  /** A renderer with its sink and views: one object per task attempt (its methods on the prototype, no closures). */
  class Scoped implements Renderer {
    constructor(private readonly s: typeof sink, private readonly v: RenderViews | undefined) {}
    render(t: string, vars: Record<string, unknown>): string { return within(this.s, this.v, 'render', t, vars) as string; }
    renderTyped(t: unknown, vars: Record<string, unknown>): unknown { return within(this.s, this.v, 'renderTyped', t, vars); }
    renderValue<T>(t: T, vars: Record<string, unknown>): T { return within(this.s, this.v, 'renderValue', t, vars) as T; }
  }
  const root = new Scoped(undefined, undefined);
  return {
    render: (t, vars) => root.render(t, vars),
    renderTyped: (t, vars) => root.renderTyped(t, vars),
    renderValue: (t, vars) => root.renderValue(t, vars),
    forSecrets: (s, v) => new Scoped(s, v),
  };
}
