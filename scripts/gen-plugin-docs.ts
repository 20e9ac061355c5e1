// `npm run docs:plugins`: regenerates the plugin reference in docs/plugins.md from the task type definitions
// (operator/plugins/docs.ts); operator/plugins/docs.test.ts fails when the committed file is not current.
import { readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BUILTIN_DEFINITIONS } from '../operator/plugins/catalog.js';
import { pluginReference, withReference } from '../operator/plugins/docs.js';
import { TRIGGER_DEFINITIONS } from '../operator/model/schema-triggers.js';

const file = resolve(fileURLToPath(new URL('.', import.meta.url)), '../docs/plugins.md');
const before = readFileSync(file, 'utf8');
const after = withReference(before, pluginReference(BUILTIN_DEFINITIONS, TRIGGER_DEFINITIONS));
if (after !== before) writeFileSync(file, after);
console.log(`${file}: ${after === before ? 'already current' : 'regenerated'} (${BUILTIN_DEFINITIONS.length} definitions)`);
