// appRoot finds the folder with package.json and node_modules from a source module and from its compiled copy.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { expect, it } from 'vitest';
import { appRoot } from './app-root.js';

it('is the repository root from a source module and from a compiled one under dist/', () => {
  const root = resolve(import.meta.dirname, '..');
  expect(appRoot(import.meta.url)).toBe(root);
  expect(appRoot(pathToFileURL(join(root, 'dist/runner-image/runner.js')).href)).toBe(root);
});

it('names the module when there is no application root above it', () => {
  const dir = mkdtempSync(join(tmpdir(), 'approot-'));
  try {
    mkdirSync(join(dir, 'a/b'), { recursive: true });
    writeFileSync(join(dir, 'a/package.json'), '{}'); // a package.json without node_modules is not an app root
    expect(() => appRoot(pathToFileURL(join(dir, 'a/b/m.js')).href)).toThrow(/No application root .*m\.js/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
