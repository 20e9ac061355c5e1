// Creating executions from HTTP requests (create, trigger, webhook): load the flow, read the inputs (JSON,
// form or multipart with files stored first), validate them BEFORE anything is created, then store the execution.
import type { Context } from 'koa';
import { newExecution } from '../operator/core/execution.js';
import { dictFrom } from '../operator/core/keyed.js';
import type { Execution, ExecutionTrigger, Flow, Label } from '../operator/core/types.js';
import { isTerminal } from '../operator/core/types.js';
import { InputValidationError, resolveInputs } from '../operator/model/index.js';
import type { Stores } from '../operator/store/types.js';
import { inputStoragePath } from '../operator/storage/paths.js';
import { fileReadDenied } from '../operator/tenancy/files.js';
import type { NamespaceGrants } from '../operator/tenancy/namespaces.js';
import { deleteStoredFiles, isJson, isMultipart, readJson, readMultipart, readText, type StoredFile } from './body.js';
import type { ApiDeps } from './deps.js';
import { HttpError, badRequest, notFound } from './errors.js';

/** Latest revision of a live flow, or the given revision; 404 otherwise. */
export async function loadFlow(stores: Stores, namespace: string, id: string, revision?: number): Promise<Flow> {
  const record = await stores.flows.get(namespace, id, revision);
  if (!record || (revision === undefined && record.deleted)) {
    const rev = revision === undefined ? '' : ` revision ${revision}`;
    throw notFound(`Flow '${namespace}.${id}'${rev} not found`);
  }
  return { ...record.flow, revision: record.revision };
}

/** Storage path of an uploaded input file, as Kestra lays it out. */
export function inputFilePath(exec: { namespace: string; flowId: string; id: string }, inputId: string, filename: string): string {
  return inputStoragePath(exec, inputId, filename);
}

export interface ProvidedInputs { values: Record<string, unknown>; files: StoredFile[] }

/**
 * Reads the inputs of a request: multipart (file parts stored under the execution, only for declared inputs
 * unless `anyFile`), JSON object, url-encoded form, or no body.
 */
export async function readInputs(
  ctx: Context, deps: ApiDeps, exec: { namespace: string; flowId: string; id: string }, declared?: Set<string>,
): Promise<ProvidedInputs> {
  if (isMultipart(ctx)) {
    const { fields, files } = await readMultipart(ctx, {
      storage: deps.stores.storage,
      maxFileBytes: deps.maxFileBytes,
      maxFieldBytes: deps.maxBodyBytes,
      pathFor: (field, filename) => (!declared || declared.has(field) ? inputFilePath(exec, field, filename) : undefined),
    });
    return { values: fields, files };
  }
  if (isJson(ctx)) {
    const body = await readJson(ctx, deps.maxBodyBytes);
    if (body === undefined || body === null) return { values: {}, files: [] };
    if (typeof body !== 'object' || Array.isArray(body)) throw badRequest('The JSON body must be an object of inputs', 'body');
    return { values: body as Record<string, unknown>, files: [] };
  }
  const text = await readText(ctx, deps.maxBodyBytes);
  if (text.trim() === '') return { values: {}, files: [] };
  if (ctx.is('application/x-www-form-urlencoded')) {
    return { values: dictFrom(new URLSearchParams(text)), files: [] };
  }
  throw new HttpError(415, `Unsupported content type '${ctx.get('content-type')}': use multipart/form-data or application/json`);
}

export interface LaunchRequest {
  flow: Flow;
  id: string;
  provided: ProvidedInputs;
  labels?: Label[];
  trigger?: ExecutionTrigger;
}

/**
 * FILE inputs from an API caller: the files uploaded with this request, or an existing execution file of the flow's
 * namespace (or of one ALLOWED_NAMESPACES grants it), such as an output of an earlier execution. Nothing else.
 */
async function checkFileInputs(stores: Stores, req: LaunchRequest, grants: NamespaceGrants): Promise<Record<string, unknown>> {
  const uploaded = new Set(req.provided.files.map((f) => f.uri));
  const caller = { namespace: req.flow.namespace, related: () => [] };
  const inputs = resolveInputs(req.flow.inputs, req.provided.values, {
    fileUri: (uri) => (uploaded.has(uri) ? undefined : fileReadDenied(caller, uri, grants)),
  });
  const missing = [];
  for (const def of req.flow.inputs ?? []) {
    const uri = inputs[def.id];
    if (def.type !== 'FILE' || typeof uri !== 'string' || uploaded.has(uri)) continue;
    if (!(await stores.storage.exists(uri).catch(() => false))) missing.push({ path: `inputs.${def.id}`, message: `file '${uri}' does not exist` });
  }
  if (missing.length) throw new InputValidationError(missing);
  return inputs;
}

/**
 * Validates inputs (deleting uploads when they are invalid), then hands the new execution to `admit` (deps.ts): stored
 * once it resolves. Resolves with the execution as created (CREATED), as Kestra answers, even when an eager start has
 * taken its first step already.
 */
export async function launch(deps: Pick<ApiDeps, 'stores' | 'grants' | 'admit'>, req: LaunchRequest): Promise<Execution> {
  const { stores, grants } = deps;
  let inputs: Record<string, unknown>;
  if (req.flow.disabled) {
    inputs = req.provided.values; // the execution fails at once; the call itself must succeed
  } else {
    try {
      inputs = await checkFileInputs(stores, req, grants);
    } catch (err) {
      await deleteStoredFiles(stores.storage, req.provided.files);
      throw err;
    }
  }
  const execution = newExecution({
    id: req.id, flow: req.flow, inputs, labels: req.labels, trigger: req.trigger, now: new Date(),
  });
  return deps.admit(execution);
}

/**
 * A watch for the end of execution `id`, taken before it can end (before its creation, or before its state is read):
 * `until` resolves with the execution as the watch feed carried it once terminal, or undefined after `timeoutMs` or
 * when `signal` aborts (the client went away). `close` ends the watch; call it in any case.
 */
export function watchForEnd(stores: Stores, id: string): { until(timeoutMs: number, signal?: AbortSignal): Promise<Execution | undefined>; close(): void } {
  let ended: Execution | undefined;
  let wake = (): void => {};
  const unsubscribe = stores.executions.watch((ev) => {
    if (ended || ev.execution.id !== id || !isTerminal(ev.execution.state.current)) return;
    ended = ev.execution;
    wake();
  });
  return {
    async until(timeoutMs, signal) {
      if (ended) return ended;
      let timer: ReturnType<typeof setTimeout> | undefined;
      let onAbort = (): void => {};
      try {
        await new Promise<void>((resolve) => {
          wake = resolve;
          timer = setTimeout(resolve, timeoutMs);
          onAbort = () => resolve();
          signal?.addEventListener('abort', onAbort, { once: true });
          if (signal?.aborted) resolve();
        });
        return ended;
      } finally {
        if (timer) clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
      }
    },
    close: unsubscribe,
  };
}

/**
 * Resolves with the execution once terminal, or with its current record after `timeoutMs` or when `signal`
 * aborts (the client went away).
 */
export async function waitForTerminal(
  stores: Stores, id: string, timeoutMs: number, signal?: AbortSignal,
): Promise<Execution | undefined> {
  const watch = watchForEnd(stores, id);
  try {
    const current = await stores.executions.get(id);
    if (!current || isTerminal(current.execution.state.current)) return current?.execution;
    return (await watch.until(timeoutMs, signal)) ?? (await stores.executions.get(id))?.execution;
  } finally {
    watch.close();
  }
}

/** An AbortSignal that fires when the client closes the connection before the response is sent. */
export function clientGone(ctx: Context): AbortSignal {
  const ac = new AbortController();
  ctx.res.once('close', () => { if (!ctx.res.writableFinished) ac.abort(); });
  return ac.signal;
}
