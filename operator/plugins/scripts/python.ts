// scripts.python.Script (inline script written to a .py file, run with python3) and scripts.python.Commands
// (shell commands that call python3). A minimal `kestra` module (Kestra.outputs/counter/timer/logger) is put
// on PYTHONPATH so Kestra scripts that import it work without the pip package.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RunContext, TaskResult } from '../types.js';
import { plugin, renderStringList, requireString } from '../util.js';
import { runScriptTask, type ScriptPlan, type ScriptVars } from './exec.js';
import { renderCommands, scriptFileName } from './shell.js';
import { KESTRA_PY } from './kestra-py.js';

async function withKestraModule(plan: ScriptPlan): Promise<ScriptPlan> {
  const dir = await mkdtemp(join(tmpdir(), 'kestra-py-'));
  await writeFile(join(dir, 'kestra.py'), KESTRA_PY);
  // `python` falls back to python3 where only python3 exists (appended to PATH: an existing `python` wins).
  await mkdir(join(dir, 'bin'));
  await writeFile(join(dir, 'bin', 'python'), '#!/bin/sh\nexec python3 "$@"\n', { mode: 0o755 });
  const existing = process.env.PYTHONPATH;
  const path = process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin';
  return {
    ...plan,
    env: {
      ...plan.env,
      PYTHONPATH: existing ? `${existing}:${dir}` : dir,
      PYTHONUNBUFFERED: '1',
      PATH: `${path}:${join(dir, 'bin')}`,
    },
    cleanup: async () => {
      await plan.cleanup?.();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

const quote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

/** Kestra's `dependencies` (pip requirement strings): installed with pip before the commands run. */
export function installCommands(ctx: RunContext, vars: ScriptVars): string[] {
  const deps = renderStringList(ctx, ctx.task.dependencies, vars).filter((d) => d.trim() !== '');
  if (deps.length === 0) return [];
  return [`python3 -m pip install --quiet --disable-pip-version-check ${deps.map(quote).join(' ')}`];
}

async function runPythonScript(ctx: RunContext): Promise<TaskResult> {
  return runScriptTask(ctx, async (vars) => {
    const name = scriptFileName(ctx, 'py');
    const commands = [...installCommands(ctx, vars), `python3 ${name}`];
    return withKestraModule({ commands, files: { [name]: requireString(ctx, 'script', vars) } });
  });
}

async function runPythonCommands(ctx: RunContext): Promise<TaskResult> {
  return runScriptTask(ctx, async (vars) => withKestraModule({ commands: [...installCommands(ctx, vars), ...renderCommands(ctx, vars)] }));
}

export const pythonScriptPlugin = plugin('scripts.python.Script', runPythonScript);
export const pythonCommandsPlugin = plugin('scripts.python.Commands', runPythonCommands);
