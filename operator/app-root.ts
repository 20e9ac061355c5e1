// The application's root folder (the one holding package.json and node_modules), found from a module's URL: the same
// answer whether the module runs from its TypeScript source (operator/x.ts) or compiled (dist/operator/x.js).
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export function appRoot(moduleUrl: string): string {
  let dir = dirname(fileURLToPath(moduleUrl));
  for (;;) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'node_modules'))) return dir;
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`No application root (package.json with node_modules) above ${fileURLToPath(moduleUrl)}`);
    dir = parent;
  }
}
