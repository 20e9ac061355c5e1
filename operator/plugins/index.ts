// Registry of the runnable task plugins, by canonical type name (`ai.service.plugin.` prefix): the runnables of the
// task types declared with definePlugin (operator/plugins/catalog.ts, built in or registered by a package). Kestra
// names are accepted through the model's normalizeType (TemplatedTask specs are not normalized by the flow parser).
import { normalizeType } from '../model/task-types.js';
import type { RunnablePlugin } from './types.js';
import { memoByCatalog, pluginDefinitions } from './catalog.js';

const registry = memoByCatalog(() => new Map(pluginDefinitions().map((d) => [d.type, d.runnable])));

/** Canonical type name: Kestra names (`io.kestra.plugin.*`, older `io.kestra.core.tasks.*`) map to `ai.service.plugin.*`. */
export function canonicalType(type: string): string {
  return normalizeType(type);
}

export function getRunnable(type: string): RunnablePlugin | undefined {
  return registry().get(canonicalType(type));
}

/** Canonical names of every runnable the registry holds. */
export function runnableTypes(): string[] {
  return [...registry().keys()];
}
