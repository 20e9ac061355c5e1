// The common engine of every script task (shell and python, Script and Commands): renders env, namespace files, files and
// commands, runs them as a local process (with a minimal environment: env.ts), turns output lines into
// logs/outputs/metrics, collects output files.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { dict } from '../../core/keyed.js';
import type { Metric } from '../../core/types.js';
import {
  BOOL, FILES_MAP_OR_STRING, NAMESPACE_FILES, OBJECT, ref, SCALAR_MAP, STRING, STRING_LIST_OR_EXPR, TPL_BOOL,
} from '../../model/schema-common.js';
import { p } from '../define.js';
import type { RunContext, TaskResult } from '../types.js';
import { isRecord, renderBool, renderStringList, renderStringMap, TYPE_PREFIX } from '../util.js';
import { scriptEnv } from './env.js';
import { collectOutputFiles, renderInputFiles, safeJoin, writeInputFiles } from './files.js';
import { loadNamespaceFiles } from './namespace-files.js';
import { runProcess } from './process.js';
import { parseProtocolLine } from './protocol.js';

/** Template variables of a script task: where it runs and where files to capture go. */
export interface ScriptVars extends Record<string, unknown> {
  workingDir: string;
  outputDir: string;
}

/** What a concrete script task contributes: the command lines, extra files, extra env. */
export interface ScriptPlan {
  commands: string[];
  /** Files written (relative to the working dir) before the run and removed afterwards. */
  files?: Record<string, string>;
  env?: Record<string, string>;
  cleanup?: () => Promise<void>;
}

const PROCESS_RUNNER = TYPE_PREFIX + 'core.runner.Process';
const DOCKER_RUNNER = TYPE_PREFIX + 'scripts.runner.docker.Docker';

/**
 * The properties every script task shares (Kestra's AbstractExecScript). They are rendered by runScriptTask, with the
 * script's own variables (`workingDir`, `outputDir`) besides the execution's, so they reach `run` as written.
 */
export const scriptProperties = {
  taskRunner: p.raw(ref('taskRunner')).describe('Where the script runs: core.runner.Process (default) or scripts.runner.docker.Docker (in cluster mode the task Pod runs the image; in embedded mode a local process, with a warning).'),
  containerImage: p.raw(STRING).describe('The image of the Docker task runner.'),
  env: p.raw(SCALAR_MAP).describe('Environment variables of the process.'),
  inputFiles: p.raw(FILES_MAP_OR_STRING).describe('Files written in the working directory first: file name → content or kestra:/// URI.'),
  outputFiles: p.raw(STRING_LIST_OR_EXPR).describe('Globs of the files stored after the run (output `outputFiles`: name → URI).'),
  namespaceFiles: p.raw(NAMESPACE_FILES).describe('Namespace files copied into the working directory (enabled, include, exclude, namespaces, ifExists, folderPerNamespace).'),
  beforeCommands: p.raw(STRING_LIST_OR_EXPR).describe('Commands run before the script.'),
  warningOnStdErr: p.raw(TPL_BOOL).describe('End in WARNING when the script wrote to stderr (default false).'),
  interpreter: p.raw(STRING_LIST_OR_EXPR).describe('The interpreter of the commands (default: /bin/sh -c).'),
  docker: p.raw(OBJECT).describe('Kestra\'s former Docker options (`image`...), superseded by taskRunner.'),
  failFast: p.raw(TPL_BOOL).describe('Stop at the first failing command (`set -e`; default true).'),
  targetOS: p.raw({ type: 'string', enum: ['LINUX', 'WINDOWS', 'AUTO'] }).describe('Kestra\'s target OS: only LINUX runs here.'),
  outputDirectory: p.raw(BOOL).describe('Kestra\'s former switch for `{{ outputDir }}` (always available here).'),
  runner: p.raw({ type: 'string', enum: ['PROCESS', 'DOCKER'] }).describe('Kestra\'s former runner switch (PROCESS or DOCKER), superseded by taskRunner.'),
};

/** The outputs of every script task. */
export const SCRIPT_OUTPUTS = {
  vars: { type: 'object', description: 'What the script sent with `::{"outputs": {...}}::` lines.' },
  exitCode: { type: 'integer', description: 'The exit code.' },
  outputFiles: { type: 'object', description: 'File name → kestra:/// URI of the stored output files.' },
} as const;

/** Embedded mode runs every script as a local process; a Docker runner is accepted with a warning. */
export async function checkTaskRunner(ctx: RunContext): Promise<void> {
  // The model's names (loaded when a script runs: the plugin catalog, which lists this module, is the model's import).
  const { normalizeType } = await import('../../model/task-types.js');
  const runner = isRecord(ctx.task.taskRunner) ? ctx.task.taskRunner : undefined;
  const type = typeof runner?.type === 'string' ? normalizeType(runner.type) : undefined;
  const legacyDocker = String(ctx.task.runner ?? '').toUpperCase() === 'DOCKER';
  if (type !== undefined && type !== PROCESS_RUNNER && type !== DOCKER_RUNNER) {
    throw new Error(`Unsupported task runner '${String(runner?.type)}': use ${PROCESS_RUNNER} or ${DOCKER_RUNNER}`);
  }
  // In a cluster the Job already runs in the task's image (the launcher sets FLOWPILOT_TASK_IMAGE): nothing to warn about.
  if ((type === DOCKER_RUNNER || legacyDocker) && !process.env.FLOWPILOT_TASK_IMAGE) {
    const image = ctx.task.containerImage ?? (isRecord(ctx.task.docker) ? ctx.task.docker.image : undefined);
    ctx.logger.warn(
      `No Docker engine in embedded mode: running as a local process; containerImage '${String(image ?? '')}' is ignored`,
    );
  }
}

function shellScript(ctx: RunContext, interpreter: string[], before: string[], commands: string[]): string {
  const failFast = renderBool(ctx, ctx.task.failFast, true);
  const isShell = /(^|\/)(sh|bash|dash|zsh|ash|ksh)$/.test(interpreter[0] ?? '');
  return [...(failFast && isShell ? ['set -e'] : []), ...before, ...commands].join('\n');
}

interface LineState {
  /** Outputs of every protocol line, later lines winning; prototype-free (the script chose the keys). */
  vars: Record<string, unknown>;
  metrics: Metric[];
  stderrLines: number;
}

function lineHandler(ctx: RunContext, state: LineState, stream: 'stdout' | 'stderr'): (line: string) => void {
  return (line) => {
    const msg = parseProtocolLine(line);
    if (msg) {
      if (msg.outputs) Object.assign(state.vars, msg.outputs);
      if (msg.metrics) state.metrics.push(...msg.metrics);
      for (const l of msg.logs ?? []) ctx.logger.log(l.level, l.message);
      return;
    }
    if (stream === 'stdout') ctx.logger.info(line);
    else {
      state.stderrLines++;
      ctx.logger.error(line);
    }
  };
}

async function prepareDirs(ctx: RunContext): Promise<ScriptVars> {
  const workingDir = ctx.workingDir;
  const outputDir = join(workingDir, `output-${basename(ctx.taskRun.id)}`);
  await mkdir(outputDir, { recursive: true });
  return { workingDir, outputDir };
}

/** Runs a script task: the plan builder receives the template variables (workingDir, outputDir). */
export async function runScriptTask(ctx: RunContext, build: (vars: ScriptVars) => Promise<ScriptPlan>): Promise<TaskResult> {
  await checkTaskRunner(ctx);
  const vars = await prepareDirs(ctx);
  const userEnv = renderStringMap(ctx, ctx.task.env, vars);
  await loadNamespaceFiles(ctx, vars.workingDir); // first: inputFiles of the same name win, as in Kestra
  await writeInputFiles(ctx, vars.workingDir, renderInputFiles(ctx, ctx.task.inputFiles, vars));
  const plan = await build(vars);
  const planFiles = Object.keys(plan.files ?? {}).map((name) => safeJoin(vars.workingDir, name));
  try {
    for (const [name, content] of Object.entries(plan.files ?? {})) await writeFile(safeJoin(vars.workingDir, name), content);
    const interpreter = ctx.task.interpreter === undefined ? ['/bin/sh', '-c'] : renderStringList(ctx, ctx.task.interpreter, vars);
    const before = renderStringList(ctx, ctx.task.beforeCommands, vars);
    const script = shellScript(ctx, interpreter, before, plan.commands);
    const state: LineState = { vars: dict(), metrics: [], stderrLines: 0 };
    const outcome = await runProcess({
      command: [...interpreter, script],
      cwd: vars.workingDir,
      env: scriptEnv({ server: process.env, ...(plan.env ? { plugin: plan.env } : {}), task: userEnv, workingDir: vars.workingDir, outputDir: vars.outputDir }),
      signal: ctx.signal,
      track: ctx.processes,
      onStdout: lineHandler(ctx, state, 'stdout'),
      onStderr: lineHandler(ctx, state, 'stderr'),
      onStart: (pid) => ctx.logger.debug(`Starting command with pid ${pid} [${interpreter.join(' ')} ...]`),
    });
    if (outcome.killed || ctx.signal.aborted) return { state: 'FAILED', error: 'Task killed' };
    for (const f of planFiles) await rm(f, { force: true });
    return await finish(ctx, vars, state, outcome.exitCode);
  } finally {
    for (const f of [...planFiles, vars.outputDir]) await rm(f, { recursive: true, force: true });
    await plan.cleanup?.();
  }
}

async function finish(ctx: RunContext, vars: ScriptVars, state: LineState, exitCode: number): Promise<TaskResult> {
  const patterns = renderStringList(ctx, ctx.task.outputFiles, vars);
  const outputFiles = await collectOutputFiles(ctx, vars.workingDir, patterns, vars.outputDir);
  const outputs: Record<string, unknown> = { exitCode, vars: state.vars };
  if (patterns.length > 0 || Object.keys(outputFiles).length > 0) outputs.outputFiles = outputFiles;
  const result: TaskResult = { state: 'SUCCESS', outputs };
  if (state.metrics.length) result.metrics = state.metrics;
  if (exitCode !== 0) {
    const error = `Command failed with exit code ${exitCode}`;
    ctx.logger.error(error);
    return { ...result, state: 'FAILED', error };
  }
  // Kestra >= 0.23: stderr output alone no longer makes a WARNING; `warningOnStdErr: true` still asks for it here.
  if (renderBool(ctx, ctx.task.warningOnStdErr, false) && state.stderrLines > 0) result.state = 'WARNING';
  return result;
}
