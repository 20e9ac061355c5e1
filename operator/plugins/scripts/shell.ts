// scripts.shell.Script (an inline script written to a file and run with /bin/sh) and scripts.shell.Commands
// (a list of commands joined into one shell script).
import type { RunContext, TaskResult } from '../types.js';
import { plugin, renderStringList, requireString } from '../util.js';
import { runScriptTask, type ScriptVars } from './exec.js';

/** A per-task-run file name, so parallel tasks sharing a working directory do not collide. */
export function scriptFileName(ctx: RunContext, extension: string): string {
  return `script_${ctx.taskRun.id.replace(/[^A-Za-z0-9_-]/g, '_')}.${extension}`;
}

export function renderCommands(ctx: RunContext, vars: ScriptVars): string[] {
  const commands = renderStringList(ctx, ctx.task.commands, vars);
  if (commands.length === 0) throw new Error(`Missing required property 'commands' on task '${ctx.task.id}'`);
  return commands;
}

/** The shell that runs the script file: the interpreter's when it is a shell (bash, zsh...), else /bin/sh. */
function scriptShell(ctx: RunContext): string {
  const first = ctx.task.interpreter === undefined ? undefined : renderStringList(ctx, ctx.task.interpreter)[0];
  return first && /(^|\/)(bash|zsh|ksh|dash|ash|sh)$/.test(first) ? first : '/bin/sh';
}

async function runShellScript(ctx: RunContext): Promise<TaskResult> {
  return runScriptTask(ctx, async (vars) => {
    const name = scriptFileName(ctx, 'sh');
    return { commands: [`${scriptShell(ctx)} ${name}`], files: { [name]: requireString(ctx, 'script', vars) } };
  });
}

async function runShellCommands(ctx: RunContext): Promise<TaskResult> {
  return runScriptTask(ctx, async (vars) => ({ commands: renderCommands(ctx, vars) }));
}

export const shellScriptPlugin = plugin('scripts.shell.Script', runShellScript);
export const shellCommandsPlugin = plugin('scripts.shell.Commands', runShellCommands);
