// scripts.shell.Script (an inline script written to a file and run with /bin/sh) and scripts.shell.Commands
// (a list of commands joined into one shell script).
import { STRING, STRING_LIST_OR_EXPR } from '../../model/schema-common.js';
import { definePlugin, p } from '../define.js';
import type { RunContext } from '../types.js';
import { renderStringList, requireString } from '../util.js';
import { runScriptTask, SCRIPT_OUTPUTS, scriptProperties, type ScriptVars } from './exec.js';

/** `script` of a Script task: rendered with the script's variables (`workingDir`...), so read as written. */
export const scriptProperty = () => p.raw(STRING).required().describe('The script (expressions allowed, with `{{ workingDir }}` and `{{ outputDir }}`).');
/** `commands` of a Commands task: rendered with the script's variables, so read as written. */
export const commandsProperty = () => p.raw(STRING_LIST_OR_EXPR).required().describe('The commands, run in one shell script (expressions allowed).');

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

export const shellScriptDefinition = definePlugin({
  type: 'scripts.shell.Script',
  title: 'Shell script',
  description: 'Writes the script to a file of the working directory and runs it with /bin/sh (or the shell `interpreter` names); `::{"outputs": {...}}::` lines set outputs, as in Kestra.',
  properties: { ...scriptProperties, script: scriptProperty() },
  outputs: SCRIPT_OUTPUTS,
  examples: [{ title: 'A script with an output', code: 'id: sh\ntype: ai.service.plugin.scripts.shell.Script\nscript: |\n  n=$(ls | wc -l)\n  echo "::{\\"outputs\\": {\\"files\\": $n}}::"\n' }],
  async run(ctx) {
    return runScriptTask(ctx, async (vars) => {
      const name = scriptFileName(ctx, 'sh');
      return { commands: [`${scriptShell(ctx)} ${name}`], files: { [name]: requireString(ctx, 'script', vars) } };
    });
  },
});

export const shellCommandsDefinition = definePlugin({
  type: 'scripts.shell.Commands',
  title: 'Shell commands',
  description: 'Runs the commands in one shell script (`set -e` unless failFast is false) in the task\'s working directory.',
  properties: { ...scriptProperties, commands: commandsProperty() },
  outputs: SCRIPT_OUTPUTS,
  examples: [{ title: 'Two commands', code: 'id: cmds\ntype: ai.service.plugin.scripts.shell.Commands\ncommands:\n  - echo "hello"\n  - ls -la\n' }],
  async run(ctx) {
    return runScriptTask(ctx, async (vars) => ({ commands: renderCommands(ctx, vars) }));
  },
});

export const shellScriptPlugin = shellScriptDefinition.runnable;
export const shellCommandsPlugin = shellCommandsDefinition.runnable;
