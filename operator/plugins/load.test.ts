// Tests of the PLUGINS setting (load.ts): the example package's task types join the catalog, so the validator, the
// plugin list, a type's documentation and the editor schema know them; a package that cannot be loaded, exports no
// definition or declares an existing type stops startup with a message naming the package and the setting.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { parseFlow } from '../model/flow.js';
import { editorSchema, pluginDocumentation, pluginList } from '../model/plugin-catalog.js';
import { flowCrdSchema } from '../model/crd-schema.js';
import { runnableTaskTypes } from '../model/task-types.js';
import { pluginDefinitions, resetRegisteredDefinitions } from './catalog.js';
import { getRunnable } from './index.js';
import { loadPluginPackages, pluginEntries } from './load.js';

const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '../..');
const HELLO = join(ROOT, 'examples/plugin-hello');
const tmp = mkdtempSync(join(tmpdir(), 'plugins-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
afterEach(() => resetRegisteredDefinitions());

const flow = (task: string) => `id: f\nnamespace: company.team\ntasks:\n  - id: t\n${task}`;

describe('PLUGINS', () => {
  it('reads a comma-separated list', () => {
    expect(pluginEntries({ PLUGINS: ' a, ./b ,,' })).toEqual(['a', './b']);
    expect(pluginEntries({})).toEqual([]);
  });

  it('registers the example package: validator, registry, plugin list, documentation, editor and CRD schema', async () => {
    expect(() => parseFlow(flow('    type: io.kestra.plugin.hello.Greet\n    name: x\n'))).toThrow(/Unknown task type|type/);
    const types = await loadPluginPackages({ PLUGINS: './examples/plugin-hello' }, { cwd: ROOT });
    expect(types).toEqual(['ai.service.plugin.hello.Greet', 'ai.service.plugin.hello.Count']);
    const parsed = parseFlow(flow('    type: io.kestra.plugin.hello.Greet\n    name: x\n'));
    expect(parsed.tasks[0]!.type).toBe('ai.service.plugin.hello.Greet');
    expect(() => parseFlow(flow('    type: ai.service.plugin.hello.Greet\n    name: x\n    nope: 1\n'))).toThrow(/nope/);
    expect(() => parseFlow(flow('    type: ai.service.plugin.hello.Greet\n'))).toThrow(/name/);
    expect(runnableTaskTypes()).toContain('ai.service.plugin.hello.Count');
    expect(getRunnable('io.kestra.plugin.hello.Greet')?.type).toBe('ai.service.plugin.hello.Greet');
    expect(pluginList('1').find((p) => p.name === 'hello')?.tasks.map((t) => t.cls)).toEqual(['ai.service.plugin.hello.Greet', 'ai.service.plugin.hello.Count']);
    expect(pluginDocumentation('io.kestra.plugin.hello.Greet')?.schema.properties.properties).toHaveProperty('times');
    expect(JSON.stringify(editorSchema('flow'))).toContain('io.kestra.plugin.hello.Greet');
    expect(JSON.stringify(flowCrdSchema())).toBeTruthy();
    // Loading the same package again in this process (a second start) changes nothing.
    expect(await loadPluginPackages({ PLUGINS: HELLO })).toEqual(types);
    expect(pluginDefinitions().filter((d) => d.type.includes('hello.'))).toHaveLength(2);
  });

  it('refuses a package that cannot be loaded, naming it and the setting', async () => {
    await expect(loadPluginPackages({ PLUGINS: 'flowpilot-no-such-plugin' })).rejects.toThrow(
      /^Cannot load plugin package 'flowpilot-no-such-plugin' \(setting PLUGINS\): /);
  });

  it('refuses a package that exports no definition', async () => {
    const file = join(tmp, 'empty.mjs');
    writeFileSync(file, 'export const x = 1;\n');
    await expect(loadPluginPackages({ PLUGINS: file })).rejects.toThrow(
      `Plugin package '${file}' (setting PLUGINS) exports no task type definition (definePlugin from 'flowpilot/plugin')`);
  });

  it('refuses a type that already exists (built in, or from an earlier package), registering nothing of the package', async () => {
    const file = join(tmp, 'dup.mjs');
    writeFileSync(file, `export default ({ definePlugin, p }) => [
  definePlugin({ type: 'dup.Fresh', title: 'F', description: 'd', properties: {}, async run() { return { state: 'SUCCESS' }; } }),
  definePlugin({ type: 'core.log.Log', title: 'L', description: 'd', properties: { m: p.string() }, async run() { return { state: 'SUCCESS' }; } }),
];\n`);
    await expect(loadPluginPackages({ PLUGINS: file })).rejects.toThrow(
      `Plugin package '${file}' (setting PLUGINS) declares task type 'ai.service.plugin.core.log.Log', which already exists`);
    expect(runnableTaskTypes()).not.toContain('ai.service.plugin.dup.Fresh');
    await expect(loadPluginPackages({ PLUGINS: `${HELLO},${HELLO}/index.js` })).resolves.toHaveLength(4);
    const again = join(tmp, 'again.mjs');
    writeFileSync(again, `export default ({ definePlugin }) => [definePlugin({ type: 'hello.Greet', title: 'G', description: 'd', properties: {}, async run() { return { state: 'SUCCESS' }; } })];\n`);
    await expect(loadPluginPackages({ PLUGINS: again })).rejects.toThrow(/declares task type 'ai\.service\.plugin\.hello\.Greet', which already exists/);
  });
});
