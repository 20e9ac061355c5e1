// The built-in task types declared with definePlugin (operator/plugins/define.ts). The model derives the type lists
// and schemas from this list, the registry the runnables: add a definition here and nothing else. Modules listed
// here may import define.ts, node built-ins and npm packages at top level, but no model or registry module (load
// heavy libraries with `await import()` inside `run`), so the model can import this list without an import cycle.
import type { PluginDefinition } from './define.js';
import { SERDES_DEFINITIONS } from './serdes/index.js';

export const BUILTIN_DEFINITIONS: readonly PluginDefinition[] = [...SERDES_DEFINITIONS];
