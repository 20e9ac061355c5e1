// The author API of task type plugins, the stable entry third-party packages use (`flowpilot/plugin` in package.json
// `exports`): definePlugin, the property builders and the types a definition names. docs/plugins.md shows how to write one.
import { definePlugin, p } from './define.js';

export { definePlugin, p, PLUGIN_PREFIX } from './define.js';
export type { OutputDoc, PluginDefinition, PluginSpec, Prop, Props, PropValues } from './define.js';
export type { RunContext, TaskLogger, TaskResult } from './types.js';

/** What the loader hands a package's default-exported factory (`export default (api) => [api.definePlugin(...)]`),
 * so a package need not resolve `flowpilot` at run time. */
export const pluginApi = { definePlugin, p } as const;
export type PluginApi = typeof pluginApi;
