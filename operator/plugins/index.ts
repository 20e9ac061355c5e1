// Registry of the runnable task plugins, by canonical type name (`ai.service.plugin.` prefix); Kestra names are
// accepted through the model's normalizeType (TemplatedTask specs are not normalized by the flow parser).
import { normalizeType } from '../model/task-types.js';
import type { RunnablePlugin } from './types.js';
import { languagePlugins } from './scripts/languages.js';
import { pythonCommandsPlugin, pythonScriptPlugin } from './scripts/python.js';
import { shellCommandsPlugin, shellScriptPlugin } from './scripts/shell.js';
import { makeTemplatedPlugin } from './templated.js';
import { inferencePlugins } from './inference/index.js';
import { memoByCatalog, pluginDefinitions } from './catalog.js';

const registry = new Map<string, RunnablePlugin>();

function register(p: RunnablePlugin): void {
  registry.set(p.type, p);
}

[
  shellScriptPlugin, shellCommandsPlugin, pythonScriptPlugin, pythonCommandsPlugin,
  ...languagePlugins,
  // S3 tasks and the batch inference task.
  ...inferencePlugins,
].forEach(register);
register(makeTemplatedPlugin((type) => getRunnable(type)));

/** The runnables declared with definePlugin (operator/plugins/catalog.ts, built in or registered by a package). */
const defined = memoByCatalog(() => new Map(pluginDefinitions().map((d) => [d.type, d.runnable])));

/** Canonical type name: Kestra names (`io.kestra.plugin.*`, older `io.kestra.core.tasks.*`) map to `ai.service.plugin.*`. */
export function canonicalType(type: string): string {
  return normalizeType(type);
}

export function getRunnable(type: string): RunnablePlugin | undefined {
  const canonical = canonicalType(type);
  return registry.get(canonical) ?? defined().get(canonical);
}

/** Canonical names of every runnable the registry holds. */
export function runnableTypes(): string[] {
  return [...registry.keys(), ...defined().keys()];
}
