// The `jq(query)` filter: real jq (jq-web, WebAssembly) once initExpressions() has loaded it, with
// the pure-JS @michaelhomer/jqjs as a synchronous fallback. Always returns the LIST of results.
import { createRequire } from 'node:module';
import { ExpressionError } from './errors.js';

const require = createRequire(import.meta.url);

interface JqWeb {
  raw(json: string, filter: string, flags?: string[]): string;
}
interface JqJs {
  compile(filter: string): (input: unknown) => Iterable<unknown>;
}

let wasm: JqWeb | null = null;
let loading: Promise<void> | null = null;
let jqjs: JqJs | null = null;

/** Loads jq-web's wasm once; safe to call many times. Failures leave the JS fallback in place. */
export function initJq(): Promise<void> {
  if (!loading) {
    loading = (async () => {
      try {
        wasm = (await (require('jq-web') as Promise<JqWeb>)) ?? null;
      } catch {
        wasm = null;
      }
    })();
  }
  return loading;
}

function runWasm(engine: JqWeb, input: unknown, query: string): unknown[] {
  let raw: string;
  try {
    raw = engine.raw(JSON.stringify(input ?? null), query, ['-c']);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    throw new ExpressionError(`jq: ${message.replace(/\s+/g, ' ').trim()}`);
  }
  return raw.split('\n').filter((line) => line.trim() !== '').map((line) => JSON.parse(line));
}

function runJs(input: unknown, query: string): unknown[] {
  if (!jqjs) {
    const mod = require('@michaelhomer/jqjs') as JqJs & { default?: JqJs };
    jqjs = mod.default ?? mod;
  }
  try {
    return [...jqjs.compile(query)(JSON.parse(JSON.stringify(input ?? null)))];
  } catch (error) {
    throw new ExpressionError(`jq: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** Runs a jq query on a value (a JSON string input is parsed first, as Kestra does). */
export function runJq(input: unknown, query: string): unknown[] {
  let data = input;
  if (typeof input === 'string') {
    try {
      data = JSON.parse(input);
    } catch {
      data = input;
    }
  }
  return wasm ? runWasm(wasm, data, query) : runJs(data, query);
}
