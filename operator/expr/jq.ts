// The `jq(query)` filter: real jq (jq-web's WebAssembly), the only jq of the engine, run in a sandbox of its own.
// Each instance lives in a node:vm context without `process`, `require` or a console: jq sees an empty environment
// (`$ENV`, `env`), a UTC clock that is the render's injected one, no files but its input, and its stdout/stderr go
// to buffers bounded by the size budget. Each call runs under the render's remaining time (node:vm `timeout`
// interrupts the WebAssembly); its heap is capped; after any failed call the instance is dropped and the next call
// gets a fresh one (instantiated synchronously from the compiled module, ~2 ms), so no call runs on a tainted one.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import vm from 'node:vm';
import { parseJsonSafe } from '../core/keyed.js';
import type { Budget } from './budget.js';
import { ExpressionError, excerpt } from './errors.js';
import { isTimeout } from './watchdog.js';

const require = createRequire(import.meta.url);

/** jq.js ends by calling its factory once with no options; we cut it there and call it ourselves. */
const FACTORY_CALL = 'jq = jq().then(';
/** A heap above this after a call is given back (the instance is dropped). */
const KEEP_HEAP_BYTES = 64 * 1024 * 1024;
/** jq's working memory: its base heap plus this many times the size limit (a parsed value is several times its text). */
const HEAP_PER_BYTE = 16;
const BASE_HEAP_BYTES = 32 * 1024 * 1024;

// Runs in each instance's context before jq.js: time is the render's clock, in UTC; nothing is printed.
const PRELUDE = `'use strict';
const HostDate = Date;
class UtcDate extends HostDate {
  constructor(...a) { if (a.length === 0) super(__clock()); else if (a.length === 1) super(a[0]); else super(HostDate.UTC(...a)); }
  static now() { return __clock(); }
  getTimezoneOffset() { return 0; }
  getFullYear() { return this.getUTCFullYear(); }
  getMonth() { return this.getUTCMonth(); }
  getDate() { return this.getUTCDate(); }
  getDay() { return this.getUTCDay(); }
  getHours() { return this.getUTCHours(); }
  getMinutes() { return this.getUTCMinutes(); }
  getSeconds() { return this.getUTCSeconds(); }
  getMilliseconds() { return this.getUTCMilliseconds(); }
  setFullYear(...a) { return this.setUTCFullYear(...a); }
  setMonth(...a) { return this.setUTCMonth(...a); }
  setDate(...a) { return this.setUTCDate(...a); }
  setHours(...a) { return this.setUTCHours(...a); }
  setMinutes(...a) { return this.setUTCMinutes(...a); }
  setSeconds(...a) { return this.setUTCSeconds(...a); }
}
globalThis.Date = UtcDate;
const quiet = () => {};
globalThis.console = { log: quiet, info: quiet, warn: quiet, error: quiet, debug: quiet, trace: quiet };
`;
const BOOT = new vm.Script('__factory(__options).then((m) => { globalThis.__jq = m; }, (e) => { globalThis.__bootError = String(e); })');
const CALL = new vm.Script("__out = __jq.raw(__input, __query, ['-c', '--'])", { filename: 'jq-call' });

interface Compiled { script: vm.Script; module: WebAssembly.Module }
interface Instance { context: vm.Context; memory(): WebAssembly.Memory }

/** What the current call may use; read by the instance's import hooks (calls never overlap: all is synchronous). */
const call = { written: 0, maxOutput: 0, maxHeap: 0, outputOver: false, heapOver: false, now: () => Date.now() };

let compiled: Compiled | null = null;
let loading: Promise<void> | null = null;
let current: Instance | null = null;

/** Loads and compiles jq-web once (the engine's only file reads, at start-up); safe to call many times. */
export function initJq(): Promise<void> {
  loading ??= load().catch((error: unknown) => {
    loading = null;
    throw new Error(`jq could not be loaded: ${(error as Error)?.message ?? String(error)}`);
  });
  return loading;
}

async function load(): Promise<void> {
  // Reading a dependency's own files; templates never reach this.
  const { readFile } = await import('node:fs/promises');
  const dir = dirname(require.resolve('jq-web'));
  const [source, wasm] = await Promise.all([readFile(join(dir, 'jq.js'), 'utf8'), readFile(join(dir, 'jq.wasm'))]);
  const cut = source.indexOf(FACTORY_CALL);
  if (cut < 0 || source.indexOf(FACTORY_CALL, cut + 1) >= 0) throw new Error('unexpected jq-web build (jq.js layout changed)');
  const script = new vm.Script(`${PRELUDE}\n${source.slice(0, cut)}\n;globalThis.__factory = jq;`, { filename: 'jq-web/jq.js' });
  const ready = { script, module: await WebAssembly.compile(wasm) };
  current = instantiate(ready);
  compiled = ready;
}

/** A fresh jq: a new context running jq.js, its WebAssembly instantiated synchronously with our import hooks. */
function instantiate(from: Compiled): Instance {
  let wasm: WebAssembly.Instance | undefined;
  const memory = (): WebAssembly.Memory => wasm!.exports.memory as WebAssembly.Memory;
  const context = vm.createContext(
    { TextEncoder, TextDecoder, __clock: () => call.now() },
    { microtaskMode: 'afterEvaluate', codeGeneration: { strings: false, wasm: false } },
  );
  from.script.runInContext(context);
  context.__options = {
    print: () => {},
    printErr: () => {},
    instantiateWasm(imports: { env: Record<string, unknown> }, done: (instance: WebAssembly.Instance) => void) {
      hook(imports.env, memory);
      wasm = new WebAssembly.Instance(from.module, imports as unknown as WebAssembly.Imports);
      done(wasm);
      return {};
    },
  };
  BOOT.runInContext(context);
  if (!context.__jq) throw new Error(`jq did not start: ${String(context.__bootError ?? 'no module')}`);
  return { context, memory };
}

/** Empty environment, bounded output and heap (the wasm imports are shared by `env` and `wasi_snapshot_preview1`). */
function hook(env: Record<string, unknown>, memory: () => WebAssembly.Memory): void {
  env.environ_sizes_get = (count: number, size: number) => {
    const view = new DataView(memory().buffer);
    view.setUint32(count, 0, true);
    view.setUint32(size, 0, true);
    return 0;
  };
  env.environ_get = () => 0;
  const fdWrite = env.fd_write as (fd: number, iov: number, count: number, written: number) => number;
  env.fd_write = (fd: number, iov: number, count: number, written: number) => {
    const view = new DataView(memory().buffer);
    for (let i = 0; i < count; i++) call.written += view.getUint32(iov + i * 8 + 4, true);
    if (call.written > call.maxOutput) {
      call.outputOver = true;
      throw new Error('jq output over the size limit');
    }
    return fdWrite(fd, iov, count, written);
  };
  const resize = env.emscripten_resize_heap as (bytes: number) => number;
  env.emscripten_resize_heap = (bytes: number) => {
    if (bytes >>> 0 > call.maxHeap) {
      call.heapOver = true;
      return 0;
    }
    return resize(bytes);
  };
}

/** The JSON text jq reads: a JSON string input is used as is (Kestra parses it), anything else is serialized. */
function inputText(input: unknown, budget: Budget): string {
  if (typeof input === 'string') {
    try {
      JSON.parse(input);
      return budget.text(input);
    } catch {
      return JSON.stringify(budget.text(input));
    }
  }
  if (budget.sizeOf(input) > budget.maxBytes) throw budget.tooBig(`would give jq an input of more than ${budget.maxBytes} bytes`);
  return JSON.stringify(input ?? null);
}

/** Runs a jq query on a value; always the LIST of its results (prototype-free objects). */
export function runJq(input: unknown, query: string, budget: Budget, now?: () => Date): unknown[] {
  if (!compiled) throw new ExpressionError('jq is not available yet: initExpressions() must load it before templates use jq()');
  const text = inputText(input, budget);
  const left = budget.remainingMs();
  if (left <= 0) throw budget.timeout();
  const jq = (current ??= instantiate(compiled));
  Object.assign(call, {
    written: 0, maxOutput: budget.maxBytes, maxHeap: BASE_HEAP_BYTES + HEAP_PER_BYTE * budget.maxBytes,
    outputOver: false, heapOver: false, now: now ? () => now().getTime() : () => Date.now(),
  });
  jq.context.__input = text;
  jq.context.__query = query;
  let raw: string;
  try {
    CALL.runInContext(jq.context, { timeout: Math.max(1, Math.ceil(left)) });
    raw = String(jq.context.__out ?? '');
  } catch (error) {
    current = null; // a failed or interrupted call may leave the instance broken or holding memory
    throw callError(error, query, budget);
  } finally {
    jq.context.__input = jq.context.__query = jq.context.__out = undefined;
  }
  if (current === jq && jq.memory().buffer.byteLength > KEEP_HEAP_BYTES) current = null;
  return raw.split('\n').filter((line) => line.trim() !== '').map((line) => parseJsonSafe(line));
}

function callError(error: unknown, query: string, budget: Budget): Error {
  const q = excerpt(query, 80);
  if (isTimeout(error)) return budget.timeout(`took too long in jq(\`${q}\`)`);
  if (call.outputOver) return budget.tooBig(`made jq(\`${q}\`) print more than ${budget.maxBytes} bytes`);
  if (call.heapOver) return budget.tooBig(`made jq(\`${q}\`) need more than ${call.maxHeap} bytes of memory (${HEAP_PER_BYTE} x the size limit + ${BASE_HEAP_BYTES})`);
  // jq's errors are made in its own context (another realm): read the message, do not test `instanceof Error`.
  const message = String((error as { message?: unknown } | null)?.message ?? error);
  const detail = message.replace(/^Non-zero exit code: \d+\s*/, '').replace(/\s+/g, ' ').trim();
  return new ExpressionError(detail.startsWith('jq: ') ? detail : `jq: ${detail}`);
}
