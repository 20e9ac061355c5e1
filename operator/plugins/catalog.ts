// The task types declared with definePlugin (operator/plugins/define.ts): the built-in list, plus the definitions third-party
// packages add at startup (PLUGINS setting, operator/plugins/load.ts). The model derives the type lists and schemas
// from `pluginDefinitions()`, the registry the runnables: add a built-in definition to BUILTIN_DEFINITIONS and nothing
// else. Modules listed here may import define.ts, node built-ins and npm packages at top level, but no model or
// registry module (load heavy libraries and project helpers with `await import()` inside `run`), so the model can
// import this list without an import cycle. What derives from the list is rebuilt when it changes (`memoByCatalog`).
import type { PluginDefinition } from './define.js';
import { assertDefinition } from './assert.js';
import { kvDeleteDefinition, kvGetDefinition, kvGetKeysDefinition, kvSetDefinition } from './kv.js';
import { labelsDefinition } from './labels.js';
import { echoDefinition, logDefinition, logFetchDefinition } from './log.js';
import { outputValuesDefinition } from './output.js';
import { returnDefinition } from './return.js';
import { sleepDefinition } from './sleep.js';
import { httpDownloadDefinition, httpRequestDefinition } from './http.js';
import { inferenceDefinitions } from './inference/index.js';
import { templatedDefinition } from './templated.js';
import { compressDefinitions } from './compress/archive.js';
import { sftpDefinitions } from './fs/sftp.js';
import { gitClone } from './git/clone.js';
import { gitPush } from './git/push.js';
import { NOTIFICATION_DEFINITIONS } from './notifications/index.js';
import { SERDES_DEFINITIONS } from './serdes/index.js';
import { mysqlQueries, mysqlQuery } from './jdbc/mysql.js';
import { postgresQueries, postgresQuery } from './jdbc/postgresql.js';
import { languageDefinitions } from './scripts/languages.js';
import { pythonCommandsDefinition, pythonScriptDefinition } from './scripts/python.js';
import { shellCommandsDefinition, shellScriptDefinition } from './scripts/shell.js';
import { localFilesDefinition } from './local-files.js';
import { deduplicateItemsDefinition, filterItemsDefinition } from './storage-items.js';
import {
  storageConcatDefinition, storageDeleteDefinition, storagePurgeDefinition, storageSizeDefinition, storageSplitDefinition,
  storageWriteDefinition,
} from './storage.js';

export const BUILTIN_DEFINITIONS: readonly PluginDefinition[] = [
  // Core: log, debug, execution, output, KV.
  logDefinition, echoDefinition, logFetchDefinition, returnDefinition, outputValuesDefinition, sleepDefinition,
  assertDefinition, labelsDefinition, kvSetDefinition, kvGetDefinition, kvDeleteDefinition, kvGetKeysDefinition,
  // Core: internal storage.
  storageWriteDefinition, storageConcatDefinition, storageSplitDefinition, storageSizeDefinition, storageDeleteDefinition,
  storagePurgeDefinition, filterItemsDefinition, deduplicateItemsDefinition, localFilesDefinition,
  // Core: HTTP.
  httpRequestDefinition, httpDownloadDefinition, templatedDefinition,
  // Scripts: shell, Python, and the contract's other languages.
  shellScriptDefinition, shellCommandsDefinition, pythonScriptDefinition, pythonCommandsDefinition, ...languageDefinitions,
  // S3 and batch inference.
  ...inferenceDefinitions,
  // Notifications, databases, files and archives, git, serialisation.
  ...NOTIFICATION_DEFINITIONS,
  postgresQuery, postgresQueries, mysqlQuery, mysqlQueries,
  ...compressDefinitions, gitClone, gitPush, ...sftpDefinitions,
  ...SERDES_DEFINITIONS,
];

/** Definitions registered after startup began (third-party packages), in registration order. */
const added: PluginDefinition[] = [];
let version = 0;

/** Every declared task type: the built-in ones, then the registered ones. */
export function pluginDefinitions(): readonly PluginDefinition[] {
  return added.length === 0 ? BUILTIN_DEFINITIONS : [...BUILTIN_DEFINITIONS, ...added];
}

/** Changes each time definitions are registered (what derives from the catalog compares it). */
export function catalogVersion(): number {
  return version;
}

/** A value built from the catalog, rebuilt on first use after the catalog changed. */
export function memoByCatalog<T>(build: () => T): () => T {
  let builtAt = -1;
  let value: T;
  return () => {
    if (builtAt !== version) {
      value = build();
      builtAt = version;
    }
    return value;
  };
}

/** The lower-case names (canonical and aliases) a definition answers to. */
function namesOf(d: PluginDefinition): string[] {
  return [d.type, d.kestraType, ...d.aliases].map((n) => n.toLowerCase());
}

/**
 * Adds definitions to the catalog (all or none). `isTaken(name)` says whether a name already means another type (the
 * model's types that are not definitions); `source` names where they come from, for the error.
 */
export function registerDefinitions(defs: readonly PluginDefinition[], source: string, isTaken: (name: string) => boolean = () => false): void {
  const taken = new Set(pluginDefinitions().flatMap(namesOf));
  for (const d of defs) {
    for (const name of [d.type, d.kestraType, ...d.aliases]) {
      if (taken.has(name.toLowerCase()) || isTaken(name)) throw new Error(`${source} declares task type '${name}', which already exists`);
    }
    namesOf(d).forEach((n) => taken.add(n));
  }
  added.push(...defs);
  version++;
}

/** Forgets the registered definitions (tests that register packages clean up with it). */
export function resetRegisteredDefinitions(): void {
  if (added.length === 0) return;
  added.length = 0;
  version++;
}
