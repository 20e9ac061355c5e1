// The program each task Pod runs: reads the attempt input the launcher wrote to internal storage (INPUT_URI), runs
// the attempt with runAttempt over its stores behind the secret layer (logs and KV masked; SECRET inputs opened with
// ENCRYPTION_KEY), writes the masked TaskOutcome to `result.json` beside the input, flushes the logs and exits 0. The task's own failure is in the result; a non-zero exit means the runner itself could not run.
// SIGTERM/SIGINT abort the attempt (KILLED result, written if time allows).
//   node dist/runner-image/runner.js                 run the attempt described by the environment (compiled by
//                                                    scripts/build.mjs; `node --import tsx runner-image/runner.ts` too)
//   node dist/runner-image/runner.js install <dir>   copy node (<dir>/node/bin/node) and the app (<dir>/app)
//                                                    for the Docker task runner layout (init container);
//                                                    FLOWPILOT_INSTALL=symlink links instead (local simulation)
// Environment: EXECUTION_ID, TASK_RUN_ID, ATTEMPT, INPUT_URI, WORK_DIR, SECRET_<NAME> / FLOWPILOT_SECRET_<NAME>,
// ENCRYPTION_KEY, plus the stores' settings (see stores.ts). Scripts it starts inherit none of them (scripts/env.ts).
import '../operator/harden.js'; // first: Object.prototype takes no new properties (operator/harden.ts)
import { realpathSync } from 'node:fs';
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
import { readAttemptInput, writeAttemptResult } from '../operator/kube/attempt-io.js';
import { envSecrets, maskedStores, maskOutcome, podSecretLookup } from '../operator/secrets/index.js';
import type { Stores } from '../operator/store/types.js';
import { openRunnerStores, type RunnerStores } from './stores.js';
import { restoreSharedDir, saveSharedDir, sharedDirOf } from './workdir-sync.js';
import { isClusterEnv, openClusterRunnerStores } from './cluster-stores.js';

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
}

/** Stores a runnable task may touch; the others belong to the controller and fail loudly if a plugin reaches for them. */
function attemptStores(s: RunnerDeps['stores']): Stores {
  const off = (name: string) => new Proxy({}, {
    get: (_t, p) => (p === 'then' ? undefined : () => { throw new Error(`The ${name} store is not available in a task runner`); }),
  });
  return {
    storage: s.storage, kv: s.kv, logs: s.logs,
    flows: off('flow') as Stores['flows'], executions: off('execution') as Stores['executions'], triggers: off('trigger state') as Stores['triggers'],
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
  const { flow, execution } = await readAttemptInput(deps.stores.storage, e.inputUri);
  if (execution.id !== e.executionId) throw new Error(`Input ${e.inputUri} is for execution ${execution.id}, not ${e.executionId}`);
  const run = execution.taskRunList.find((r) => r.id === e.taskRunId);
  if (!run) throw new Error(`Task run ${e.taskRunId} is not in execution ${execution.id}`);
  const secrets = envSecrets(env);
  secrets.track(execution);
  const stores = maskedStores(attemptStores(deps.stores), secrets);
  const renderer = createSecretRenderer(stores, env, deps.secrets ?? podSecretLookup(env));
  const signal = deps.signal ?? new AbortController().signal;
  let outcome: TaskOutcome;
  const shared = sharedDirOf(flow, execution, run, e.workDir);
  try {
    if (shared) await restoreSharedDir(deps.stores.storage, shared);
    outcome = await runAttempt({ stores, renderer, workRoot: e.workDir, grants: namespaceGrantsFromEnv(env) }, flow, execution, run, e.attempt, signal);
    if (shared) await saveSharedDir(deps.stores.storage, shared);
  } finally {
    await deps.stores.logs.flush();
  }
  outcome = maskOutcome(outcome, secrets.masker(execution.id));
  await writeAttemptResult(deps.stores.storage, e.inputUri, outcome);
  return outcome;
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
  const stores = isClusterEnv(env) ? await openClusterRunnerStores(env) : openRunnerStores(env);
  try {
    const outcome = await runRunner(env, { stores, signal: ac.signal });
    process.stderr.write(`attempt finished: ${outcome.state}\n`);
    return 0;
  } finally {
    await stores.close();
  }
}

// Run as a program (argv[1] may be a symlink: the Docker layout links the app in local simulations).
if (process.argv[1] && import.meta.url === pathToFileURL(realpathSync(resolve(process.argv[1]))).href) {
  main(process.argv.slice(2), process.env).then(
    (code) => process.exit(code),
    (err: unknown) => {
      process.stderr.write(`runner failed: ${(err as Error)?.stack ?? String(err)}\n`);
      process.exit(1);
    },
  );
}
