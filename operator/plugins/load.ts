// The PLUGINS setting: at startup each listed npm package (or path to one) is imported and the task type definitions it
// exports (definePlugin, from the `flowpilot/plugin` entry) join the catalog, so the flow schema, the validator, the
// runnable registry, the /api/v1/plugins routes and the editor schema include them. Every entry point calls
// loadPluginPackages before it serves or runs anything; a package that cannot be loaded, exports no definition, or
// declares a type that already exists stops startup with a message naming the package and the setting.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { isAbsolute, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { taskTypeInfo } from '../model/task-types.js';
import { pluginDefinitions, registerDefinitions } from './catalog.js';
import { PLUGIN_PREFIX, type PluginDefinition } from './define.js';
import { pluginApi } from './plugin-api.js';

/** The setting's name, for messages. */
export const PLUGINS_SETTING = 'PLUGINS';

/** The entries of the PLUGINS setting (comma-separated package names or paths; blanks ignored). */
export function pluginEntries(env: NodeJS.ProcessEnv): string[] {
  return (env[PLUGINS_SETTING] ?? '').split(',').map((s) => s.trim()).filter((s) => s !== '');
}

/** A value is a definition made by definePlugin (duck-typed: a package may carry its own copy of the author API). */
export function isPluginDefinition(v: unknown): v is PluginDefinition {
  if (typeof v !== 'object' || v === null) return false;
  const d = v as Partial<PluginDefinition>;
  return typeof d.type === 'string' && d.type.startsWith(PLUGIN_PREFIX) && typeof d.kestraType === 'string'
    && Array.isArray(d.aliases) && typeof d.schema === 'object' && typeof d.runnable?.run === 'function';
}

/**
 * The definitions a module exports: its default and named exports, each a definition or a list of them; a default
 * export that is a function is a factory, called with the author API (pluginApi), returning them.
 */
export async function definitionsOf(mod: Record<string, unknown>): Promise<PluginDefinition[]> {
  const found = new Set<PluginDefinition>();
  const values = Object.entries(mod).map(([k, v]) => (k === 'default' && typeof v === 'function' ? (v as (api: unknown) => unknown)(pluginApi) : v));
  for (const value of await Promise.all(values)) {
    for (const item of Array.isArray(value) ? value : [value]) if (isPluginDefinition(item)) found.add(item);
  }
  return [...found];
}

/** The definitions each imported module gave (a factory is called once per process). */
const declared = new WeakMap<object, PluginDefinition[]>();

const isPath = (entry: string): boolean => entry.startsWith('.') || isAbsolute(entry);

/** The module file of a package directory: its package.json `exports` ('.' entry) or `main`, else index.js. */
function packageEntry(dir: string): string {
  const manifest = join(dir, 'package.json');
  if (!existsSync(manifest)) return join(dir, 'index.js');
  const pkg = JSON.parse(readFileSync(manifest, 'utf8')) as { exports?: unknown; main?: string };
  let target: unknown = pkg.exports;
  if (typeof target === 'object' && target !== null && '.' in target) target = (target as Record<string, unknown>)['.'];
  if (typeof target === 'object' && target !== null) {
    const conditions = target as Record<string, unknown>;
    target = conditions.import ?? conditions.default ?? conditions.node;
  }
  return join(dir, typeof target === 'string' ? target : pkg.main ?? 'index.js');
}

/** What `import()` gets for an entry: a package name as is (resolved from the application's node_modules), a path as a file URL. */
function specifierOf(entry: string, cwd: string): string {
  if (!isPath(entry)) return entry;
  const path = resolve(cwd, entry);
  const file = existsSync(path) && statSync(path).isDirectory() ? packageEntry(path) : path;
  return pathToFileURL(file).href;
}

/**
 * Imports every package PLUGINS lists and registers its definitions (in order; all of one package or none). Returns
 * the types registered. Throws a message naming the package and the setting on any problem.
 */
export async function loadPluginPackages(env: NodeJS.ProcessEnv = process.env, opts: { cwd?: string } = {}): Promise<string[]> {
  const cwd = opts.cwd ?? process.cwd();
  const types: string[] = [];
  for (const entry of pluginEntries(env)) {
    const where = `package '${entry}' (setting ${PLUGINS_SETTING})`;
    let mod: Record<string, unknown>;
    try {
      mod = (await import(specifierOf(entry, cwd))) as Record<string, unknown>;
    } catch (err) {
      throw new Error(`Cannot load plugin ${where}: ${err instanceof Error ? err.message : String(err)}`);
    }
    let defs = declared.get(mod);
    try {
      defs ??= await definitionsOf(mod);
      declared.set(mod, defs);
    } catch (err) {
      throw new Error(`Plugin ${where} failed to declare its task types: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (defs.length === 0) throw new Error(`Plugin ${where} exports no task type definition (definePlugin from 'flowpilot/plugin')`);
    types.push(...defs.map((d) => d.type));
    // The same module loaded again in this process (a second start in one test run) is already registered.
    const known = pluginDefinitions();
    if (defs.every((d) => known.includes(d))) continue;
    registerDefinitions(defs, `Plugin ${where}`, (name) => taskTypeInfo(name) !== undefined);
  }
  return types;
}
