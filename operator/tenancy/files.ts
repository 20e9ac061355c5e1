// Which internal-storage files an execution may read: its own, its parent's (Subflow) or triggering execution's,
// its children's (Subflow, ForEachItem), and the execution files and namespace files (`<namespace>/_files/...`) of its
// namespace or of a namespace ALLOWED_NAMESPACES grants. Anything else (another tenant's files, paths outside the executions layout such as `kestra:///etc/passwd`)
// is refused with the URI and the rule. Pure: decided from the caller's record and the URI's path.
import { childSlots } from '../core/subflow.js';
import type { Execution, Flow } from '../core/types.js';
import { executionStoragePath, NAMESPACE_FILES_SEGMENT, storageSegments, type ExecutionRef } from '../storage/paths.js';
import { namespaceAllowed, type NamespaceGrants, NO_GRANTS } from './namespaces.js';

/** The storage folder segment that separates `<namespace>/<flowId>` from an execution id (reserved in ids). */
export const EXECUTIONS_SEGMENT = 'executions';

/** Who reads: an execution's namespace, its own storage folder and those of the executions it is related to. */
export interface FileCaller {
  namespace: string;
  own?: ExecutionRef;
  /** Parent, triggering and child executions; computed only when the cheaper rules did not already decide. */
  related(): ExecutionRef[];
  /** Files handed to the execution as FILE inputs (checked against the giver's rights when it was created). */
  granted?(): ReadonlySet<string>;
}

const str = (v: unknown): v is string => typeof v === 'string' && v.length > 0;

/**
 * The caller profile of an execution record: own folder, parent, triggering execution, children, and (with its flow,
 * which says which inputs are FILE inputs) the files it was given as inputs.
 */
export function fileCallerOf(exec: Execution, flow?: Flow): FileCaller & { own: ExecutionRef } {
  let memo: ExecutionRef[] | undefined;
  let files: Set<string> | undefined;
  return {
    namespace: exec.namespace,
    own: { namespace: exec.namespace, flowId: exec.flowId, id: exec.id },
    related: () => (memo ??= relatedExecutions(exec)),
    granted: () => (files ??= new Set((flow?.inputs ?? []).filter((i) => i.type === 'FILE').map((i) => exec.inputs?.[i.id]).filter(str))),
  };
}

function relatedExecutions(exec: Execution): ExecutionRef[] {
  const related: ExecutionRef[] = [];
  if (exec.parent) related.push({ namespace: exec.parent.namespace, flowId: exec.parent.flowId, id: exec.parent.executionId });
  const t = exec.trigger?.variables as Record<string, unknown> | undefined;
  if (t && str(t.executionId) && str(t.namespace) && str(t.flowId)) related.push({ namespace: t.namespace, flowId: t.flowId, id: t.executionId });
  for (const run of exec.taskRunList) {
    for (const { slot } of childSlots(run)) {
      const req = slot.request as { namespace?: unknown; flowId?: unknown; executionId?: unknown } | undefined;
      if (req && str(req.namespace) && str(req.flowId) && str(req.executionId)) related.push({ namespace: req.namespace, flowId: req.flowId, id: req.executionId });
    }
  }
  return related;
}

/** `<namespace>/<flowId>/executions/<id>/...` of a storage path, or undefined when it is not an execution file. */
export function executionOfPath(segments: string[]): ExecutionRef | undefined {
  const at = segments.indexOf(EXECUTIONS_SEGMENT);
  // At least one namespace segment and a flow id before it, an id after it, and a file inside the execution's folder.
  if (at < 2 || segments.length < at + 3) return undefined;
  return { namespace: segments.slice(0, at - 1).join('.'), flowId: segments[at - 1]!, id: segments[at + 1]! };
}

/**
 * The namespace whose files (`<namespace>/_files/...`) a storage path is in, or undefined. Neither `executions` nor
 * `_files` can be a namespace segment (reserved at save) nor a flow id, so whichever comes first tells the layout.
 */
export function namespaceFilesOwner(segments: string[]): string | undefined {
  const at = segments.findIndex((s) => s === EXECUTIONS_SEGMENT || s === NAMESPACE_FILES_SEGMENT);
  if (at < 1 || segments[at] !== NAMESPACE_FILES_SEGMENT || segments.length < at + 2) return undefined;
  return segments.slice(0, at).join('.');
}

/** Execution folder segments in the current layout and in the older dotted one (`company.team/flow/...`). */
function folders(ref: ExecutionRef): string[][] {
  const current = executionStoragePath(ref).split('/');
  const legacy = [ref.namespace, ref.flowId, EXECUTIONS_SEGMENT, ref.id];
  return current.length === legacy.length ? [current] : [current, legacy];
}

const within = (path: string[], folder: string[]) => path.length > folder.length && folder.every((s, i) => path[i] === s);

/**
 * Why `caller` may not read `uri` (undefined when it may). The message names the URI and the rule, as the refusal
 * reaches the flow author as a task error or a 422.
 */
export function fileReadDenied(caller: FileCaller, uri: string, grants: NamespaceGrants = NO_GRANTS): string | undefined {
  let segments: string[];
  try {
    if (!uri.startsWith('kestra:///')) throw new Error('not kestra:///');
    segments = storageSegments(uri);
  } catch {
    return `'${uri}' is not an internal storage URI (kestra:///<namespace>/<flow>/executions/<id>/...)`;
  }
  const filesOf = namespaceFilesOwner(segments);
  if (filesOf !== undefined) {
    if (namespaceAllowed(caller.namespace, filesOf, grants)) return undefined;
    return `Reading '${uri}' is not allowed: it is a namespace file of namespace '${filesOf}', and an execution reads ` +
      `the namespace files of its namespace '${caller.namespace}' only (ALLOWED_NAMESPACES can grant more)`;
  }
  const inFolderOf = (ref: ExecutionRef) => folders(ref).some((f) => within(segments, f));
  if (caller.own && inFolderOf(caller.own)) return undefined;
  const owner = executionOfPath(segments);
  if (owner && namespaceAllowed(caller.namespace, owner.namespace, grants)) return undefined;
  if (caller.related().some(inFolderOf)) return undefined;
  if (caller.granted?.().has(uri)) return undefined;
  return `Reading '${uri}' is not allowed: an execution reads only its own files, its FILE inputs, those of its parent ` +
    `and child executions, and execution files of its namespace '${caller.namespace}'` +
    (owner ? ` (this file belongs to namespace '${owner.namespace}'; ALLOWED_NAMESPACES can grant it)` : ' (this path is not an execution file)');
}
