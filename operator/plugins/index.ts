// Registry of the runnable task plugins, by canonical type name (`ai.service.plugin.` prefix; Kestra's
// `io.kestra.plugin.` names and the old `io.kestra.core.tasks.` aliases of these tasks are accepted too).
import type { RunnablePlugin } from './types.js';
import { httpDownloadPlugin, httpRequestPlugin } from './http.js';
import { kvDeletePlugin, kvGetPlugin, kvSetPlugin } from './kv.js';
import { labelsPlugin } from './labels.js';
import { logPlugin } from './log.js';
import { returnPlugin } from './return.js';
import { languagePlugins } from './scripts/languages.js';
import { pythonCommandsPlugin, pythonScriptPlugin } from './scripts/python.js';
import { shellCommandsPlugin, shellScriptPlugin } from './scripts/shell.js';
import { makeTemplatedPlugin } from './templated.js';
import { TYPE_PREFIX } from './util.js';

const registry = new Map<string, RunnablePlugin>();

function register(p: RunnablePlugin): void {
  registry.set(p.type, p);
}

[
  logPlugin, returnPlugin, labelsPlugin, kvSetPlugin, kvGetPlugin, kvDeletePlugin, httpRequestPlugin,
  httpDownloadPlugin, shellScriptPlugin, shellCommandsPlugin, pythonScriptPlugin, pythonCommandsPlugin,
  ...languagePlugins,
].forEach(register);
register(makeTemplatedPlugin((type) => getRunnable(type)));

/** Older Kestra names of the same tasks. */
const LEGACY: Record<string, string> = {
  'io.kestra.core.tasks.log.Log': 'core.log.Log',
  'io.kestra.core.tasks.debugs.Return': 'core.debug.Return',
  'io.kestra.plugin.fs.http.Request': 'core.http.Request',
  'io.kestra.plugin.fs.http.Download': 'core.http.Download',
};

/** Canonical type name: `io.kestra.plugin.x` and legacy aliases map to `ai.service.plugin.x`. */
export function canonicalType(type: string): string {
  const legacy = LEGACY[type];
  if (legacy) return TYPE_PREFIX + legacy;
  if (type.startsWith('io.kestra.plugin.')) return TYPE_PREFIX + type.slice('io.kestra.plugin.'.length);
  return type;
}

export function getRunnable(type: string): RunnablePlugin | undefined {
  return registry.get(canonicalType(type));
}

export const runnableTypes: string[] = [...registry.keys()];
