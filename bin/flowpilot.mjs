#!/usr/bin/env node
// The flowpilot CLI's executable (package.json bin: flowpilot and kubectl-flowpilot): runs the CLI's build (cli/dist/,
// scripts/build-cli.mjs, made by npm install) while it is current, else the TypeScript sources through tsx, the runtime
// `npm start` uses, so a checkout without the build (npm ci --ignore-scripts) or with edited sources still works.
// FLOWPILOT_CLI_SOURCE=1 runs the sources even when the build is current.
import { currentBuild } from '../scripts/build-cli.mjs';

const source = process.env.FLOWPILOT_CLI_SOURCE ?? '';
if (!['', '0', '1'].includes(source)) {
  process.stderr.write(`error: FLOWPILOT_CLI_SOURCE must be 1 (run the TypeScript sources) or 0, not '${source}'\n`);
  process.exit(2);
}
const built = source === '1' ? undefined : currentBuild();
if (built) {
  if (process.env.FLOWPILOT_DEBUG) process.setSourceMapsEnabled(true); // stack traces name the TypeScript sources
  await import(built);
} else {
  const { register } = await import('tsx/esm/api');
  register();
  await import('../cli/main.ts');
}
