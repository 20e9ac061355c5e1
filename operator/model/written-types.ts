// Plugin types as the author wrote them: the engine keeps canonical names (`ai.service.plugin...`, normalize.ts), the
// API answers Kestra's clients with the names of the flow's source (`io.kestra.plugin...`). The source is walked beside
// the parsed flow; a `type` is given back only where the written one normalizes to the stored one.
import { parseDocument } from 'yaml';
import type { Flow } from '../core/types.js';
import { normalizeType } from './task-types.js';

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Deepest nesting walked (flows are validated already; this only bounds the walk). */
const MAX_DEPTH = 64;

function restore(parsed: unknown, written: unknown, depth: number): unknown {
  if (depth > MAX_DEPTH) return parsed;
  if (Array.isArray(parsed)) {
    if (!Array.isArray(written)) return parsed;
    return parsed.map((item, i) => restore(item, written[i], depth + 1));
  }
  if (!isObj(parsed) || !isObj(written)) return parsed;
  const out: Obj = {};
  for (const [k, v] of Object.entries(parsed)) {
    if (k === 'type' && typeof v === 'string' && typeof written.type === 'string' && written.type !== v
      && normalizeType(written.type) === v) {
      out[k] = written.type.trim();
    } else {
      out[k] = Object.hasOwn(written, k) ? restore(v, written[k], depth + 1) : v;
    }
  }
  return out;
}

function readSource(source: string): unknown {
  try {
    const doc = parseDocument(source, { merge: true });
    return doc.errors.length > 0 ? undefined : doc.toJS({ maxAliasCount: 1000 });
  } catch {
    return undefined;
  }
}

const CACHE_LIMIT = 500;
const cache = new Map<string, Flow>();

/**
 * A copy of `flow` with every plugin `type` (tasks, triggers, conditions, task runners, plugin defaults) as written in
 * `source`. `key` (namespace, id, revision) caches the answer: a revision's source never changes.
 */
export function withWrittenTypes(flow: Flow, source: string | undefined, key?: string): Flow {
  if (source === undefined) return flow;
  const hit = key === undefined ? undefined : cache.get(key);
  if (hit) return hit;
  const written = readSource(source);
  const out = isObj(written) ? (restore(flow, written, 0) as Flow) : flow;
  if (key !== undefined) {
    cache.set(key, out);
    if (cache.size > CACHE_LIMIT) cache.delete(cache.keys().next().value as string);
  }
  return out;
}
