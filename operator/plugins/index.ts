// Registry of the runnable task plugins, by canonical type name (`ai.service.plugin.` prefix); Kestra names are
// accepted through the model's normalizeType (TemplatedTask specs are not normalized by the flow parser).
import { normalizeType } from '../model/task-types.js';
import type { RunnablePlugin } from './types.js';
import { httpDownloadPlugin, httpRequestPlugin } from './http.js';
import { assertPlugin } from './assert.js';
import { kvDeletePlugin, kvGetKeysPlugin, kvGetPlugin, kvSetPlugin } from './kv.js';
import { labelsPlugin } from './labels.js';
import { echoPlugin, logFetchPlugin, logPlugin } from './log.js';
import { localFilesPlugin } from './local-files.js';
import { outputValuesPlugin } from './output.js';
import { returnPlugin } from './return.js';
import { languagePlugins } from './scripts/languages.js';
import { pythonCommandsPlugin, pythonScriptPlugin } from './scripts/python.js';
import { shellCommandsPlugin, shellScriptPlugin } from './scripts/shell.js';
import { sleepPlugin } from './sleep.js';
import { deduplicateItemsPlugin, filterItemsPlugin } from './storage-items.js';
import { storageConcatPlugin, storageDeletePlugin, storagePurgePlugin, storageSizePlugin, storageSplitPlugin, storageWritePlugin } from './storage.js';
import { makeTemplatedPlugin } from './templated.js';
import { inferencePlugins } from './inference/index.js';
import { memoByCatalog, pluginDefinitions } from './catalog.js';

const registry = new Map<string, RunnablePlugin>();

function register(p: RunnablePlugin): void {
  registry.set(p.type, p);
}

[
  logPlugin, returnPlugin, labelsPlugin, kvSetPlugin, kvGetPlugin, kvDeletePlugin, httpRequestPlugin,
  httpDownloadPlugin, shellScriptPlugin, shellCommandsPlugin, pythonScriptPlugin, pythonCommandsPlugin,
  ...languagePlugins,
  // Common Kestra core runnables beyond the contract's list.
  outputValuesPlugin, sleepPlugin, storageWritePlugin, kvGetKeysPlugin, assertPlugin, logFetchPlugin,
  storageConcatPlugin, storageSplitPlugin, storageSizePlugin, storageDeletePlugin, storagePurgePlugin, filterItemsPlugin, deduplicateItemsPlugin,
  // Kestra's deprecated core tasks still found in its flows.
  echoPlugin, localFilesPlugin,
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
