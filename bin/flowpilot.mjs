#!/usr/bin/env node
// The flowpilot CLI's executable (package.json bin: flowpilot and kubectl-flowpilot): loads the TypeScript program
// through tsx, the runtime `npm start` uses, so it works from a fresh `npm ci` without a build step.
import { register } from 'tsx/esm/api';

register();
await import('../cli/main.ts');
