// scripts.python.Script (inline script written to a .py file, run with python3) and scripts.python.Commands
// (shell commands that call python3). A minimal `kestra` module (Kestra.outputs/counter/timer/logger) is put
// on PYTHONPATH so Kestra scripts that import it work without the pip package.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { STRING, STRING_LIST_OR_EXPR } from '../../model/schema-common.js';
import { definePlugin, p } from '../define.js';
import type { RunContext } from '../types.js';
import { renderStringList, requireString } from '../util.js';
import { runScriptTask, SCRIPT_OUTPUTS, scriptProperties, type ScriptPlan, type ScriptVars } from './exec.js';
import { commandsProperty, renderCommands, scriptFileName, scriptProperty } from './shell.js';
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

const pythonProperties = {
  ...scriptProperties,
  dependencies: p.raw(STRING_LIST_OR_EXPR).describe('pip requirements installed (python3 -m pip install) before the run.'),
  pythonVersion: p.raw(STRING).describe('Kestra\'s Python version for its uv environments: not supported here (python3 on the PATH runs; a warning says so).'),
};

/** pythonVersion is accepted (Kestra flows set it) but python3 on the PATH runs: said, not ignored silently. */
function warnPythonVersion(ctx: RunContext): void {
  if (ctx.task.pythonVersion !== undefined) ctx.logger.warn(`pythonVersion '${String(ctx.task.pythonVersion)}' is not supported: python3 on the PATH runs the script`);
}

export const pythonScriptDefinition = definePlugin({
  type: 'scripts.python.Script',
  title: 'Python script',
  description: 'Writes the script to a .py file and runs it with python3, after installing `dependencies` with pip; a minimal `kestra` module (Kestra.outputs, counter, timer, logger) is importable.',
  properties: { ...pythonProperties, script: scriptProperty() },
  outputs: SCRIPT_OUTPUTS,
  examples: [{ title: 'Send an output', code: 'id: py\ntype: ai.service.plugin.scripts.python.Script\nscript: |\n  from kestra import Kestra\n  Kestra.outputs({"answer": 42})\n' }],
  async run(ctx) {
    warnPythonVersion(ctx);
    return runScriptTask(ctx, async (vars) => {
      const name = scriptFileName(ctx, 'py');
      const commands = [...installCommands(ctx, vars), `python3 ${name}`];
      return withKestraModule({ commands, files: { [name]: requireString(ctx, 'script', vars) } });
    });
  },
});

export const pythonCommandsDefinition = definePlugin({
  type: 'scripts.python.Commands',
  title: 'Python commands',
  description: 'Runs shell commands that call python3 (or `python`), after installing `dependencies` with pip; the `kestra` module is importable.',
  properties: { ...pythonProperties, commands: commandsProperty() },
  outputs: SCRIPT_OUTPUTS,
  examples: [{ title: 'Run a namespace file', code: 'id: pyc\ntype: ai.service.plugin.scripts.python.Commands\nnamespaceFiles:\n  enabled: true\ncommands:\n  - python3 main.py\n' }],
  async run(ctx) {
    warnPythonVersion(ctx);
    return runScriptTask(ctx, async (vars) => withKestraModule({ commands: [...installCommands(ctx, vars), ...renderCommands(ctx, vars)] }));
  },
});

export const pythonScriptPlugin = pythonScriptDefinition.runnable;
export const pythonCommandsPlugin = pythonCommandsDefinition.runnable;
