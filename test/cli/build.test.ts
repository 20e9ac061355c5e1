// The CLI's ahead-of-time build (scripts/build-cli.mjs) and its start: bin/flowpilot.mjs runs the build while it is
// current and the TypeScript sources through tsx otherwise (no build, an edited source, FLOWPILOT_CLI_SOURCE=1), and
// each command loads only what it needs, counted by a module loader hook recording every module the process loads.
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { currentBuild } from '../../scripts/build-cli.mjs';
import { createFlow, simpleFlow, startTestApi, type TestApi } from '../api/helpers.js';
import { BIN, cli, ROOT } from './run-cli.js';

const tmp = mkdtempSync(join(tmpdir(), 'flowpilot-cli-build-'));
const HOOK = join(tmp, 'trace.mjs');
writeFileSync(HOOK, `import { register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent(\`import { appendFileSync } from 'node:fs';
export async function load(url, context, next) { appendFileSync(process.env.TRACE_FILE, url + '\\\\n'); return next(url, context); }\`));
`);
let traces = 0;

/** Runs the CLI (`bin`, default the repository's) with the loader hook; resolves with its result and the modules it loaded. */
async function traced(args: string[], env: NodeJS.ProcessEnv = {}, bin = BIN): Promise<{ code: number; stdout: string; stderr: string; modules: string[] }> {
  const file = join(tmp, `trace-${traces++}.txt`);
  writeFileSync(file, '');
  const r = await cli(['--import', HOOK, bin, ...args], { TRACE_FILE: file, ...env }, { argv0: '--no-warnings' });
  return { ...r, modules: readFileSync(file, 'utf8').split('\n').filter(Boolean) };
}

const loads = (modules: string[], part: string): boolean => modules.some((m) => m.includes(part));

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
  await createFlow(api, simpleFlow('cli.build', 'hello'));
});
afterAll(async () => {
  await api?.close();
  rmSync(tmp, { recursive: true, force: true });
});

describe('what each command loads', { timeout: 120_000 }, () => {
  it('the test setup left a current build, which bin/flowpilot.mjs runs: no tsx, no TypeScript', async () => {
    expect(currentBuild()).toMatch(/\/cli\/dist\/main\.js$/);
    const r = await traced(['--help']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('Usage: flowpilot');
    expect(loads(r.modules, '/cli/dist/main.js')).toBe(true);
    expect(loads(r.modules, '/node_modules/tsx/')).toBe(false);
    expect(r.modules.filter((m) => m.endsWith('.ts'))).toEqual([]);
  });

  it('--help and API commands load neither the validator, the engine, the server, yaml nor the Kubernetes client', async () => {
    const heavy = ['/node_modules/ajv/', '/node_modules/@kubernetes/', '/node_modules/koa/', '/node_modules/better-sqlite3/', '/node_modules/yaml/', '/node_modules/luxon/'];
    const help = await traced(['--help']);
    const kv = await traced(['kv', 'list', 'cli.build', '--server', api.url]);
    expect(kv.code, kv.stderr).toBe(0);
    const flows = await traced(['flow', 'list', '--server', api.url]);
    expect(flows.stdout).toMatch(/cli\.build\s+hello/);
    for (const r of [help, kv, flows]) for (const part of heavy) expect(loads(r.modules, part), part).toBe(false);
    // From the sources the same holds: no module of the engine, model or API is loaded.
    const source = await traced(['--help'], { FLOWPILOT_CLI_SOURCE: '1' });
    expect(source.code, source.stderr).toBe(0);
    expect(loads(source.modules, '/cli/main.ts')).toBe(true);
    for (const part of [`${ROOT}/operator/model/`, `${ROOT}/operator/core/engine`, `${ROOT}/api/`, ...heavy]) expect(loads(source.modules, part), part).toBe(false);
  });

  it('flow validate loads the validator, not the server nor the Kubernetes client; -o yaml prints YAML (yaml loads on use)', async () => {
    const dir = join(tmp, 'flows');
    mkdirSync(dir);
    writeFileSync(join(dir, 'a.yaml'), simpleFlow('cli.build', 'a'));
    const r = await traced(['flow', 'validate', dir]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain('1 flow valid');
    expect(loads(r.modules, '/node_modules/ajv/')).toBe(true);
    for (const part of ['/node_modules/koa/', '/node_modules/better-sqlite3/', '/node_modules/@kubernetes/']) expect(loads(r.modules, part), part).toBe(false);
    expect((await cli(['kv', 'set', 'cli.build', 'answer', '42', '--server', api.url])).code).toBe(0);
    const y = await cli(['kv', 'get', 'cli.build', 'answer', '--server', api.url, '-o', 'yaml']);
    expect(y.code, y.stderr).toBe(0);
    expect(parseYaml(y.stdout)).toEqual({ type: 'NUMBER', value: 42 });
  });
});

describe('build or sources', { timeout: 180_000 }, () => {
  // A checkout of its own: bin/, scripts/build-cli.mjs and cli/ copied (they are edited), the rest linked.
  const root = join(tmp, 'checkout');
  const bin = join(root, 'bin/flowpilot.mjs');
  const program = join(root, 'cli/program.ts');
  const built = join(root, 'cli/dist/main.js');
  const TITLE = 'Command line of flowpilot';
  const help = async (env: NodeJS.ProcessEnv = {}): Promise<{ text: string; tsx: boolean }> => {
    const r = await traced(['--help'], env, bin);
    expect(r.code, r.stderr).toBe(0);
    return { text: r.stdout, tsx: loads(r.modules, '/node_modules/tsx/') };
  };
  const build = async (): Promise<void> => {
    const r = await cli([join(root, 'scripts/build-cli.mjs')], {}, { argv0: '--no-warnings', cwd: root });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/built the CLI \(\d+ inputs, \d+ files\) into cli\/dist/);
  };

  beforeAll(() => {
    mkdirSync(join(root, 'scripts'), { recursive: true });
    cpSync(join(ROOT, 'bin'), join(root, 'bin'), { recursive: true });
    cpSync(join(ROOT, 'scripts/build-cli.mjs'), join(root, 'scripts/build-cli.mjs'));
    cpSync(join(ROOT, 'cli'), join(root, 'cli'), { recursive: true, filter: (src) => !src.includes('/cli/dist') });
    cpSync(join(ROOT, 'package.json'), join(root, 'package.json'));
    for (const link of ['operator', 'api', 'node_modules', 'tsconfig.json']) symlinkSync(join(ROOT, link), join(root, link));
  });

  it('without a build runs the sources; after a build runs the build, until a source changes', async () => {
    expect(await help()).toMatchObject({ tsx: true });
    await build();
    // Mark the build, to see which one runs.
    writeFileSync(built, readFileSync(built, 'utf8').replace(TITLE, 'BUILT COPY'));
    expect(await help()).toEqual({ text: expect.stringContaining('BUILT COPY'), tsx: false });
    expect(await help({ FLOWPILOT_CLI_SOURCE: '1' })).toEqual({ text: expect.stringContaining(TITLE), tsx: true });

    // A touched file with the same content keeps the build current (its hash is compared).
    const later = new Date(Date.now() + 5_000);
    utimesSync(program, later, later);
    expect((await help()).text).toContain('BUILT COPY');

    // An edited source makes it stale: the sources run, with the edit.
    writeFileSync(program, readFileSync(program, 'utf8').replace(TITLE, 'EDITED SOURCE'));
    expect(await help()).toEqual({ text: expect.stringContaining('EDITED SOURCE'), tsx: true });

    await build();
    expect(await help()).toEqual({ text: expect.stringContaining('EDITED SOURCE'), tsx: false });
  });

  it('refuses a FLOWPILOT_CLI_SOURCE it does not know', async () => {
    const r = await cli(['--help'], { FLOWPILOT_CLI_SOURCE: 'yes' }, { argv0: bin });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('FLOWPILOT_CLI_SOURCE must be 1');
  });
});
