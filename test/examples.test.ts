// Every example flow in examples/ is a valid flow (documentation that matches the code).
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { parseFlow } from '../operator/model/index.js';

const ROOT = new URL('..', import.meta.url).pathname;
const examples = ['examples/flows', 'examples/inference'].flatMap((d) =>
  readdirSync(join(ROOT, d)).filter((f) => f.endsWith('.yaml')).map((f) => join(d, f)));

it.each(examples)('%s is a valid flow', (file) => {
  const flow = parseFlow(readFileSync(join(ROOT, file), 'utf8'));
  expect(flow.tasks.length).toBeGreaterThan(0);
});
