// The program each task Pod runs: reads the attempt input the launcher wrote to internal storage (INPUT_URI), runs
// the attempt with runAttempt over its stores behind the secret layer (logs and KV masked; SECRET inputs opened with
// ENCRYPTION_KEY), writes the masked TaskOutcome (with the values its task declared sensitive, sealed) to `result.json`
// beside the input, flushes the logs and exits 0. The task's own failure is in the result. Its start (KV list, bucket,
// attempt input) and its result write retry transient failures until RUNNER_START_TIMEOUT_MS (deadline.ts). When the
// runner itself fails it exits RUNNER_FAILURE_EXIT_CODE, its reason in the container's termination message
// (TERMINATION_MESSAGE_PATH) and, when the bucket answers, in an infrastructure-failure result: the operator makes a
// new attempt (TASK_INFRA_RETRIES).
// SIGTERM/SIGINT abort the attempt (KILLED result, written if time allows).
//   node dist/runner-image/runner.js                 run the attempt described by the environment (compiled by
//                                                    scripts/build.mjs; `node --import tsx runner-image/runner.ts` too)
//   node dist/runner-image/runner.js install <dir>   copy node (<dir>/node/bin/node) and the app (<dir>/app)
//                                                    for the Docker task runner layout (init container);
//                                                    FLOWPILOT_INSTALL=symlink links instead (local simulation)
// Environment: EXECUTION_ID, TASK_RUN_ID, ATTEMPT, INPUT_URI, WORK_DIR, SECRET_<NAME> / FLOWPILOT_SECRET_<NAME>,
// ENCRYPTION_KEY, RUNNER_START_TIMEOUT_MS, TERMINATION_MESSAGE_PATH, plus the stores' settings (see stores.ts). Scripts
// it starts inherit none of them (scripts/env.ts).
import '../operator/harden.js'; // first: Object.prototype takes no new properties (operator/harden.ts)
import { realpathSync, writeFileSync } from 'node:fs';
import { cp, mkdir, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { TaskOutcome } from '../operator/core/engine-types.js';
import { appRoot } from '../operator/app-root.js';
import { runAttempt } from '../operator/controller/attempt.js';
import { createSecretRenderer } from '../operator/controller/secrets.js';
import { namespaceGrantsFromEnv } from '../operator/tenancy/namespaces.js';
import { initExpressions } from '../operator/expr/index.js';
import { loadPluginPackages } from '../operator/plugins/load.js';
import { LIMIT_SETTINGS, limitsFromEnv } from '../operator/core/limits.js';
import { reasonOf } from '../operator/faults.js';
import {
  MAX_TERMINATION_MESSAGE, readAttemptInput, RUNNER_FAILURE_EXIT_CODE, TERMINATION_MESSAGE_ENV, writeAttemptResult,
} from '../operator/kube/attempt-io.js';
import { createMasker, envSecrets, envSecretValues, maskedStores, maskOutcome, podSecretLookup } from '../operator/secrets/index.js';
import type { Stores } from '../operator/store/types.js';
import { openRunnerStores, type RunnerStores } from './stores.js';
import { restoreSharedDir, saveSharedDir, sharedDirOf } from './workdir-sync.js';
import { isClusterEnv, openClusterRunnerStores } from './cluster-stores.js';
import { Deadline, RunnerKilled } from './deadline.js';

export interface RunnerEnv { executionId: string; taskRunId: string; attempt: number; inputUri: string; workDir: string }

export function readRunnerEnv(env: NodeJS.ProcessEnv): RunnerEnv {
  const need = (name: string): string => {
    const v = env[name];
    if (!v) throw new Error(`Missing environment variable ${name}`);
    return v;
  };
  const attempt = Number(need('ATTEMPT'));
  if (!Number.isInteger(attempt) || attempt < 1) throw new Error(`ATTEMPT must be a positive integer, got '${env.ATTEMPT}'`);
  return {
    executionId: need('EXECUTION_ID'), taskRunId: need('TASK_RUN_ID'), attempt, inputUri: need('INPUT_URI'),
    workDir: env.WORK_DIR || join(tmpdir(), 'flowpilot-work'),
  };
}

export interface RunnerDeps {
  stores: Pick<RunnerStores, 'storage' | 'kv' | 'logs'>;
  /** Secret lookup; default: `FLOWPILOT_SECRET_<NAME>`, else `SECRET_<NAME>` from `env`. */
  secrets?: (name: string) => string | undefined;
  /** Aborting it kills the attempt (the program wires SIGTERM to it). */
  signal?: AbortSignal;
  /** The runner's own I/O under RUNNER_START_TIMEOUT_MS: the start's deadline, and a fresh one for the result. */
  io?: RunnerIo;
}

export interface RunnerIo {
  /** Reading the attempt input (the program's start deadline, already running while the stores opened). */
  start: Deadline;
  /** A new deadline for writing the result and flushing the logs. */
  finish(): Deadline;
}

/** Runs `fn` under `deadline` (retrying transient failures) when there is one, else once. */
async function guarded<T>(deadline: Deadline | undefined, what: string, fn: () => Promise<T>): Promise<T> {
  return deadline ? deadline.retry(what, fn) : fn();
}

/** Stores a runnable task may touch; the others belong to the controller and fail loudly if a plugin reaches for them. */
function attemptStores(s: RunnerDeps['stores']): Stores {
  const off = (name: string) => new Proxy({}, {
    get: (_t, p) => (p === 'then' ? undefined : () => { throw new Error(`The ${name} store is not available in a task runner`); }),
  });
  return {
    storage: s.storage, kv: s.kv, logs: s.logs,
    flows: off('flow') as Stores['flows'], executions: off('execution') as Stores['executions'], triggers: off('trigger state') as Stores['triggers'],
    // The flow of the attempt input carries what its namespaces give it (namespaceContext).
    namespaces: off('namespace') as Stores['namespaces'],
    close: async () => {},
  };
}

/**
 * Runs the attempt described by `env` and writes its result. Returns the outcome; throws only when the runner could
 * not run (bad env, unreadable input, task run missing from the input, result not writable).
 */
export async function runRunner(env: NodeJS.ProcessEnv, deps: RunnerDeps): Promise<TaskOutcome> {
  const e = readRunnerEnv(env);
  await initExpressions();
  await loadPluginPackages(env); // PLUGINS: the operator passes its setting; the image must hold the packages
  const start = deps.io?.start;
  const { flow, execution, secrets: known } = await guarded(start, 'reading the attempt input', () => readAttemptInput(deps.stores.storage, e.inputUri));
  if (execution.id !== e.executionId) throw new Error(`Input ${e.inputUri} is for execution ${execution.id}, not ${e.executionId}`);
  const run = execution.taskRunList.find((r) => r.id === e.taskRunId);
  if (!run) throw new Error(`Task run ${e.taskRunId} is not in execution ${execution.id}`);
  const secrets = envSecrets(env);
  secrets.track(execution);
  if (known) secrets.learnSealed(execution.id, known);
  const stores = maskedStores(attemptStores(deps.stores), secrets);
  const renderer = createSecretRenderer(stores, env, deps.secrets ?? podSecretLookup(env));
  const signal = deps.signal ?? new AbortController().signal;
  let outcome: TaskOutcome;
  const shared = sharedDirOf(flow, execution, run, e.workDir);
  try {
    if (shared) await guarded(start, 'restoring the shared working directory', () => restoreSharedDir(deps.stores.storage, shared));
    start?.done();
    outcome = await runAttempt({ stores, renderer, workRoot: e.workDir, grants: namespaceGrantsFromEnv(env), limits: limitsFromEnv(env) }, flow, execution, run, e.attempt, signal);
    if (shared) await finishing(deps.io, 'saving the shared working directory', () => saveSharedDir(deps.stores.storage, shared));
  } finally {
    await finishing(deps.io, 'flushing the logs', () => deps.stores.logs.flush());
  }
  outcome = maskOutcome(outcome, secrets.masker(execution.id));
  // What the attempt declared sensitive goes back sealed, so the operator masks it in the record too.
  const declared = secrets.sealedValues(execution.id);
  if (declared.length) outcome = { ...outcome, secrets: declared };
  await finishing(deps.io, 'writing the result', () => writeAttemptResult(deps.stores.storage, e.inputUri, outcome));
  return outcome;
}

/** After the task: `fn` under a fresh deadline (the task may have run for hours), not cut short by SIGTERM. */
async function finishing(io: RunnerIo | undefined, what: string, fn: () => Promise<unknown>): Promise<void> {
  const deadline = io?.finish();
  try {
    await guarded(deadline, what, fn);
  } finally {
    deadline?.done();
  }
}

/** Docker task runner layout: `<dest>/node/bin/node` and `<dest>/app` (this app, node_modules included). */
export async function installRunner(dest: string, mode: 'copy' | 'symlink' = 'copy'): Promise<void> {
  const appDir = appRoot(import.meta.url);
  const nodeTarget = join(dest, 'node', 'bin', 'node');
  const appTarget = join(dest, 'app');
  await mkdir(dirname(nodeTarget), { recursive: true });
  if (mode === 'symlink') {
    await symlink(process.execPath, nodeTarget);
    await symlink(appDir, appTarget);
    return;
  }
  await cp(process.execPath, nodeTarget, { preserveTimestamps: true });
  await cp(appDir, appTarget, { recursive: true, verbatimSymlinks: true, filter: (src) => !src.includes(`${appDir}/.git`) });
}

async function main(argv: string[], env: NodeJS.ProcessEnv): Promise<number> {
  if (argv[0] === 'install') {
    if (!argv[1]) throw new Error('usage: runner.ts install <dir>');
    await installRunner(argv[1], env.FLOWPILOT_INSTALL === 'symlink' ? 'symlink' : 'copy');
    return 0;
  }
  const ac = new AbortController();
  const stop = (sig: string) => () => ac.abort(new Error(`Task killed (${sig})`));
  process.once('SIGTERM', stop('SIGTERM'));
  process.once('SIGINT', stop('SIGINT'));
  const log = (line: string) => process.stderr.write(`[runner] ${line}\n`);
  let stores: RunnerStores | undefined;
  try {
    const { runnerStartTimeoutMs: ms } = limitsFromEnv(env); // a malformed setting is the runner's failure, named
    const start = new Deadline(ms, log, ac.signal);
    try {
      stores = isClusterEnv(env) ? await openClusterRunnerStores(env, log) : openRunnerStores(env);
      await stores.ready?.(start);
      const outcome = await runRunner(env, { stores, signal: ac.signal, io: { start, finish: () => new Deadline(ms, log) } });
      log(`attempt finished: ${outcome.state}`);
      return 0;
    } finally {
      start.done();
    }
  } catch (err) {
    return await runnerFailed(err, env, stores, log);
  } finally {
    await stores?.close().catch((err: unknown) => log(`closing the stores failed: ${reasonOf(err)}`));
  }
}

/** How long the report of a failure may keep trying to reach the bucket (it may be what failed): 10 s at most. */
const REPORT_MS = 10_000;

/**
 * The runner failed itself (not the task): its reason goes to the termination message and, when the bucket answers,
 * to the result (an infrastructure failure; KILLED when SIGTERM stopped the start). Returns the exit code.
 */
async function runnerFailed(err: unknown, env: NodeJS.ProcessEnv, stores: RunnerStores | undefined, log: (line: string) => void): Promise<number> {
  const killed = err instanceof RunnerKilled;
  const masker = createMasker([...envSecretValues(env), env.ENCRYPTION_KEY, env.STORAGE_S3_SECRET_ACCESS_KEY, env.LOG_STORE_URL].filter((v): v is string => !!v));
  const reason = masker.mask(killed ? reasonOf(err) : `The runner failed: ${reasonOf(err)}`);
  log(masker.mask(killed ? reason : `runner failed: ${(err as Error)?.stack ?? reason}`));
  if (!killed) writeTerminationMessage(env, reason, log);
  let inputUri: string | undefined;
  try { inputUri = readRunnerEnv(env).inputUri; } catch { /* the environment itself is what failed */ }
  if (stores && inputUri) {
    const uri = inputUri;
    const report = new Deadline(Math.min(REPORT_MS, startTimeoutMs(env)), log);
    try {
      await report.retry('writing the failure as the result', () => writeAttemptResult(stores.storage, uri, killed
        ? { state: 'KILLED', error: reason } : { state: 'FAILED', infrastructure: true, error: reason }));
    } catch (writeErr) {
      log(`the failure could not be written as the result (the termination message has it): ${reasonOf(writeErr)}`);
    } finally {
      report.done();
    }
  }
  return killed ? 0 : RUNNER_FAILURE_EXIT_CODE;
}

/** RUNNER_START_TIMEOUT_MS, or its default when the setting itself is malformed (then that is the failure reported). */
function startTimeoutMs(env: NodeJS.ProcessEnv): number {
  try { return limitsFromEnv(env).runnerStartTimeoutMs; } catch { return LIMIT_SETTINGS.runnerStartTimeoutMs.default; }
}

/** The reason where Kubernetes shows it (`kubectl describe pod`, the Pod's status): TERMINATION_MESSAGE_PATH. */
function writeTerminationMessage(env: NodeJS.ProcessEnv, reason: string, log: (line: string) => void): void {
  const path = env[TERMINATION_MESSAGE_ENV];
  if (!path) return;
  const bytes = Buffer.from(reason, 'utf8');
  try {
    writeFileSync(path, bytes.length > MAX_TERMINATION_MESSAGE ? bytes.subarray(0, MAX_TERMINATION_MESSAGE) : bytes);
  } catch (err) {
    log(`could not write the termination message to ${path}: ${reasonOf(err)}`);
  }
}

// Run as a program (argv[1] may be a symlink: the Docker layout links the app in local simulations).
if (process.argv[1] && import.meta.url === pathToFileURL(realpathSync(resolve(process.argv[1]))).href) {
  main(process.argv.slice(2), process.env).then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`runner failed: ${(err as Error)?.stack ?? String(err)}\n`);
      process.exit(RUNNER_FAILURE_EXIT_CODE);
    },
  );
}
