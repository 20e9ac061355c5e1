// Script tasks of the other languages of the contract (Node.js, Ruby, R, Julia, PowerShell): the script is written
// to a file run by the language's interpreter; Commands run in the shell. Node gets a minimal `@kestra-io/libs`.
import { accessSync, constants } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { definePlugin, type PluginDefinition } from '../define.js';
import { requireString, withTask } from '../util.js';
import { runScriptTask, SCRIPT_OUTPUTS, scriptProperties, type ScriptPlan } from './exec.js';
import { commandsProperty, renderCommands, scriptFileName, scriptProperty } from './shell.js';

interface Language {
  family: string;
  /** The language's name, for the docs. */
  name: string;
  /** What runs a script file, for the docs. */
  runs: string;
  extension: string;
  /** The interpreter program the script file (or the default Commands interpreter) needs on PATH. */
  binary: string;
  /** Command line running the script file. */
  run(file: string): string;
  /** Default interpreter of Commands when the task sets none. */
  commandsInterpreter?: string[];
  prepare?(plan: ScriptPlan): Promise<ScriptPlan>;
}

const quote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`;

const NODE_LIB = `function send(payload) { console.log('::' + JSON.stringify(payload) + '::'); }
module.exports = {
  outputs: (outputs) => send({ outputs }),
  counter: (name, value, tags) => send({ metrics: [{ name, type: 'counter', value, tags: tags || {} }] }),
  timer: (name, duration, tags) => send({ metrics: [{ name, type: 'timer', value: duration, tags: tags || {} }] }),
  logger: () => Object.fromEntries(['trace', 'debug', 'info', 'warn', 'error'].map((l) =>
    [l, (...m) => send({ logs: [{ level: l.toUpperCase(), message: m.join(' ') }] })])),
};
module.exports.default = module.exports;
`;

/** Puts a minimal `@kestra-io/libs` on NODE_PATH (used by `require`) for Node script tasks. */
async function withNodeLib(plan: ScriptPlan): Promise<ScriptPlan> {
  const dir = await mkdtemp(join(tmpdir(), 'kestra-node-'));
  const lib = join(dir, '@kestra-io', 'libs');
  await mkdir(lib, { recursive: true });
  await writeFile(join(lib, 'index.js'), NODE_LIB);
  const existing = process.env.NODE_PATH;
  return {
    ...plan,
    env: { ...plan.env, NODE_PATH: existing ? `${existing}:${dir}` : dir },
    cleanup: async () => {
      await plan.cleanup?.();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

const LANGUAGES: Language[] = [
  { family: 'node', name: 'Node.js', runs: 'the node binary running flowpilot (with a minimal `@kestra-io/libs`)', extension: 'js', binary: process.execPath, run: (f) => `${quote(process.execPath)} ${f}`, prepare: withNodeLib },
  { family: 'ruby', name: 'Ruby', runs: '`ruby`', extension: 'rb', binary: 'ruby', run: (f) => `ruby ${f}` },
  { family: 'r', name: 'R', runs: '`Rscript`', extension: 'R', binary: 'Rscript', run: (f) => `Rscript ${f}` },
  { family: 'julia', name: 'Julia', runs: '`julia` (not installed by flowpilot: on the PATH, or a Docker task runner image)', extension: 'jl', binary: 'julia', run: (f) => `julia ${f}` },
  {
    family: 'powershell', name: 'PowerShell', runs: '`pwsh` (not installed by flowpilot: on the PATH, or a Docker task runner image)', extension: 'ps1', binary: 'pwsh', run: (f) => `pwsh -NoProfile -NonInteractive -File ${f}`,
    commandsInterpreter: ['pwsh', '-NoProfile', '-NonInteractive', '-Command'],
  },
];

/** Whether `binary` is an executable file, as named or found on PATH. */
function onPath(binary: string, path = process.env.PATH ?? ''): boolean {
  const candidates = binary.includes('/') ? [binary] : path.split(':').filter(Boolean).map((d) => join(d, binary));
  return candidates.some((c) => { try { accessSync(c, constants.X_OK); return true; } catch { return false; } });
}

/** Fails with the way out when the language's interpreter is not on this machine (Julia and PowerShell are not in Debian). */
function requireInterpreter(lang: Language): void {
  if (onPath(lang.binary)) return;
  throw new Error(`The ${lang.family} interpreter '${lang.binary}' is not installed where this task runs: install it on `
    + `the worker, or run the flow in cluster mode with the Docker task runner (taskRunner: {type: `
    + `io.kestra.plugin.scripts.runner.docker.Docker}) and a containerImage that has it: the task's Pod runs that image`);
}

function scriptDefinition(lang: Language): PluginDefinition {
  return definePlugin({
    type: `scripts.${lang.family}.Script`,
    title: `${lang.name} script`,
    description: `Writes the script to a .${lang.extension} file of the working directory and runs it with ${lang.runs}; \`::{"outputs": {...}}::\` lines set outputs.`,
    properties: { ...scriptProperties, script: scriptProperty() },
    outputs: SCRIPT_OUTPUTS,
    examples: [{ title: `A ${lang.name} script`, code: `id: ${lang.family}\ntype: ai.service.plugin.scripts.${lang.family}.Script\nscript: |\n  # your ${lang.name} code\n` }],
    run: (ctx) => runScriptTask(ctx, async (vars) => {
      requireInterpreter(lang);
      const name = scriptFileName(ctx, lang.extension);
      const plan: ScriptPlan = { commands: [lang.run(name)], files: { [name]: requireString(ctx, 'script', vars) } };
      return lang.prepare ? lang.prepare(plan) : plan;
    }),
  });
}

function commandsDefinition(lang: Language): PluginDefinition {
  return definePlugin({
    type: `scripts.${lang.family}.Commands`,
    title: `${lang.name} commands`,
    description: `Runs the commands in one script (${lang.commandsInterpreter ? `with ${lang.commandsInterpreter.join(' ')} unless \`interpreter\` says otherwise` : 'with /bin/sh'}) in the task's working directory; they call ${lang.runs}.`,
    properties: { ...scriptProperties, commands: commandsProperty() },
    outputs: SCRIPT_OUTPUTS,
    examples: [{ title: `Run a ${lang.name} file`, code: `id: ${lang.family}c\ntype: ai.service.plugin.scripts.${lang.family}.Commands\nnamespaceFiles:\n  enabled: true\ncommands:\n  - ${lang.run(`main.${lang.extension}`).replace(quote(process.execPath), 'node')}\n` }],
    run: (ctx) => {
      const task = ctx.task.interpreter === undefined && lang.commandsInterpreter
        ? { ...ctx.task, interpreter: lang.commandsInterpreter } : ctx.task;
      const local = task === ctx.task ? ctx : withTask(ctx, task);
      return runScriptTask(local, async (vars) => {
        if (task !== ctx.task) requireInterpreter(lang);
        const plan: ScriptPlan = { commands: renderCommands(local, vars) };
        return lang.prepare ? lang.prepare(plan) : plan;
      });
    },
  });
}

/** Script and Commands of every language above. */
export const languageDefinitions: PluginDefinition[] = LANGUAGES.flatMap((l) => [scriptDefinition(l), commandsDefinition(l)]);
export const languagePlugins = languageDefinitions.map((d) => d.runnable);
