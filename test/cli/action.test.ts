// The CI action's script (scripts/ci-deploy.sh, run by action.yml) as a child process against a real embedded
// server: validates then deploys a folder, dry run and delete, stops before deploying an invalid folder, needs the
// server URL; action.yml passes each of its inputs to the script.
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import { startEmbedded, type Embedded } from '../support/embedded.js';
import { ROOT, type CliResult } from './run-cli.js';

const SCRIPT = join(ROOT, 'scripts/ci-deploy.sh');
let e: Embedded;
let dir: string;

function runScript(env: NodeJS.ProcessEnv): Promise<CliResult> {
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('FLOWPILOT_') && !k.startsWith('FLOWS_')));
  const proc = spawn('bash', [SCRIPT], { cwd: dir, env: { ...base, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  proc.stdout.on('data', (d) => { stdout += d; });
  proc.stderr.on('data', (d) => { stderr += d; });
  return new Promise((res) => proc.once('close', (code) => res({ code: code ?? -1, stdout, stderr })));
}

const flow = (id: string, ns = 'ci.team'): string => `id: ${id}\nnamespace: ${ns}\ntasks:\n  - id: t\n    type: io.kestra.plugin.core.log.Log\n    message: ${id}\n`;

beforeAll(async () => {
  e = await startEmbedded();
  dir = mkdtempSync(join(tmpdir(), 'flowpilot-action-'));
  mkdirSync(join(dir, 'flows'));
  writeFileSync(join(dir, 'flows', 'a.yaml'), flow('a'));
  writeFileSync(join(dir, 'flows', 'b.yaml'), flow('b'));
});
afterAll(async () => {
  await e?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('scripts/ci-deploy.sh', { timeout: 120_000 }, () => {
  it('validates and deploys the folder; dry run changes nothing; delete prunes the namespace', async () => {
    const server = e.base.replace(/\/api\/v1$/, '');
    const dry = await runScript({ FLOWPILOT_URL: server, FLOWS_DRY_RUN: 'true' });
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toContain('2 flows valid');
    expect(dry.stdout).toMatch(/dry run, nothing changed: 2 create/);
    expect((await e.json('/flows/ci.team')).body).toEqual([]);

    const first = await runScript({ FLOWPILOT_URL: server, FLOWS_NAMESPACE: 'ci.team' });
    expect(first.code, first.stderr).toBe(0);
    expect(first.stdout).toMatch(/2 create/);
    await e.createFlow(flow('stale'));
    const pruned = await runScript({ FLOWPILOT_URL: server, FLOWS_NAMESPACE: 'ci.team', FLOWS_DELETE: 'true' });
    expect(pruned.code, pruned.stderr).toBe(0);
    expect(pruned.stdout).toMatch(/2 unchanged, 1 delete/);
    expect(((await e.json('/flows/ci.team')).body as any[]).map((f) => f.id).sort()).toEqual(['a', 'b']);
  });

  it('stops before deploying when a flow is invalid (exit 1, file and line), and without a server URL (exit 2)', async () => {
    mkdirSync(join(dir, 'broken'));
    writeFileSync(join(dir, 'broken', 'ok.yaml'), flow('never-deployed'));
    writeFileSync(join(dir, 'broken', 'bad.yaml'), 'id: bad\nnamespace: ci.team\ntasks: []\n');
    const r = await runScript({ FLOWPILOT_URL: e.base, FLOWS_FOLDER: 'broken' });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/broken\/bad\.yaml:3: error: tasks/);
    expect((await e.json('/flows/ci.team/never-deployed')).status).toBe(404);
    const noUrl = await runScript({ FLOWS_FOLDER: 'flows' });
    expect(noUrl.code).toBe(2);
    expect(noUrl.stderr).toMatch(/FLOWPILOT_URL is not set/);
  });

  it('action.yml hands every input to the script', () => {
    const action = parseYaml(readFileSync(join(ROOT, 'action.yml'), 'utf8')) as { inputs: Record<string, unknown>; runs: { using: string; steps: { env?: Record<string, string>; run?: string }[] } };
    expect(action.runs.using).toBe('composite');
    const step = action.runs.steps.find((s) => s.run?.includes('scripts/ci-deploy.sh'))!;
    const passed = Object.values(step.env ?? {}).join(' ');
    for (const input of Object.keys(action.inputs)) expect(passed, input).toContain(`inputs.${input}`);
    expect(Object.keys(action.inputs)).toEqual(expect.arrayContaining(['server', 'token', 'namespace', 'folder', 'delete']));
    // --ignore-scripts skips the postinstall: the install step builds the CLI itself.
    expect(action.runs.steps.some((s) => s.run?.includes('npm ci --ignore-scripts') && s.run.includes('node scripts/build-cli.mjs'))).toBe(true);
  });
});
