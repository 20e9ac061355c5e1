// What the operator and a task Pod's runner exchange through internal storage: the attempt's input (flow + execution
// record, written by the launcher before it creates the Job) and its result (the TaskOutcome, written by the runner).
// Both live under the execution's storage folder, so deleting an execution's files removes them too. When the runner
// itself fails (not the task) it writes an infrastructure failure there when it can, writes its reason to the
// container's termination message, and exits with RUNNER_FAILURE_EXIT_CODE; the operator retries such attempts.
import type { TaskOutcome } from '../core/engine-types.js';
import { parseJsonSafe } from '../core/keyed.js';
import type { Execution, Flow } from '../core/types.js';
import { storageSegments, storageUri } from '../storage/local.js';
import { ATTEMPTS_FOLDER, executionStoragePath, type ExecutionRef } from '../storage/paths.js';
import type { InternalStorage } from '../store/types.js';

export interface AttemptInput {
  flow: Flow;
  execution: Execution;
  /** The values the operator knows secret for the execution (a credential an earlier task declared), sealed for it. */
  secrets?: string[];
}

/** Exit code of a runner that failed itself (sysexits EX_TEMPFAIL): the operator reads it as an infrastructure failure. */
export const RUNNER_FAILURE_EXIT_CODE = 75;

/** Variable naming the file the runner writes its failure reason to: the container's terminationMessagePath. */
export const TERMINATION_MESSAGE_ENV = 'TERMINATION_MESSAGE_PATH';

/** Kubernetes keeps at most 4096 bytes of a termination message. */
export const MAX_TERMINATION_MESSAGE = 4096;

/** `<execution folder>/_attempts/<taskRunId>/<attempt>/`: one folder per attempt. */
export function attemptStoragePath(exec: ExecutionRef, taskRunId: string, attempt: number): string {
  return `${executionStoragePath(exec)}/${ATTEMPTS_FOLDER}/${taskRunId}/${attempt}`;
}

export const attemptInputUri = (exec: ExecutionRef, taskRunId: string, attempt: number): string =>
  storageUri(`${attemptStoragePath(exec, taskRunId, attempt)}/input.json`);

/** The result sits beside the input: the runner derives it from INPUT_URI, the launcher from the Job's annotation. */
export const resultUriFor = (inputUri: string): string => inputUri.replace(/\/input\.json$/, '/result.json');

/** Writes the input as it is now; with `after`, once that earlier write of the same file has settled (the last one wins). */
export async function writeAttemptInput(storage: InternalStorage, input: AttemptInput, taskRunId: string, attempt: number, after?: Promise<unknown>): Promise<string> {
  const body = Buffer.from(JSON.stringify(input));
  if (after) await after.then(() => undefined, () => undefined);
  return storage.put(`${attemptStoragePath(input.execution, taskRunId, attempt)}/input.json`, body);
}

export async function readAttemptInput(storage: InternalStorage, uri: string): Promise<AttemptInput> {
  const parsed = JSON.parse((await storage.get(uri)).toString('utf8')) as Partial<AttemptInput>;
  if (!parsed || typeof parsed !== 'object' || !parsed.flow || !parsed.execution) throw new Error(`Attempt input ${uri} has no flow or execution`);
  return parsed as AttemptInput;
}

export async function writeAttemptResult(storage: InternalStorage, inputUri: string, outcome: TaskOutcome): Promise<string> {
  return storage.put(storageSegments(resultUriFor(inputUri)).join('/'), Buffer.from(JSON.stringify(outcome)));
}

const STATES = new Set<TaskOutcome['state']>(['SUCCESS', 'WARNING', 'FAILED', 'KILLED']);

/** The runner's result, or undefined when it wrote none (killed before, crashed, never started). */
export async function readAttemptResult(storage: InternalStorage, inputUri: string): Promise<TaskOutcome | undefined> {
  const uri = resultUriFor(inputUri);
  let raw: Buffer;
  try {
    raw = await storage.get(uri);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as { status?: number }).status === 404) return undefined;
    throw err;
  }
  const parsed = parseJsonSafe(raw.toString('utf8')) as TaskOutcome; // outputs keyed by the task: prototype-free
  if (!parsed || !STATES.has(parsed.state)) return { state: 'FAILED', error: `Invalid task result in ${uri}` };
  if (parsed.infrastructure !== undefined && parsed.infrastructure !== true) delete parsed.infrastructure;
  return parsed;
}
