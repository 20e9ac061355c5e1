// The built-in task types declared with definePlugin (operator/plugins/define.ts). The model derives the type lists
// and schemas from this list, the registry the runnables: add a definition here and nothing else. Modules listed
// here may import define.ts, node built-ins and npm packages at top level, but no model or registry module (load
// heavy libraries with `await import()` inside `run`), so the model can import this list without an import cycle.
import { compressDefinitions } from './compress/archive.js';
import type { PluginDefinition } from './define.js';
import { sftpDefinitions } from './fs/sftp.js';
import { gitClone } from './git/clone.js';
import { gitPush } from './git/push.js';
import { NOTIFICATION_DEFINITIONS } from './notifications/index.js';
import { SERDES_DEFINITIONS } from './serdes/index.js';
import { mysqlQueries, mysqlQuery } from './jdbc/mysql.js';
import { postgresQueries, postgresQuery } from './jdbc/postgresql.js';

export const BUILTIN_DEFINITIONS: readonly PluginDefinition[] = [
  ...NOTIFICATION_DEFINITIONS,
  postgresQuery, postgresQueries, mysqlQuery, mysqlQueries,
  ...compressDefinitions, gitClone, gitPush, ...sftpDefinitions,
  ...SERDES_DEFINITIONS,
];
