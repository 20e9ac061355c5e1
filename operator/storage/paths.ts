// The layout of internal storage, in one place: an execution's files live under
// `<namespace with dots as slashes>/<flowId>/executions/<executionId>/` (Kestra's layout); and the rules every storage
// path or `kestra:///` URI must follow (no traversal, no other scheme), shared by the local and S3 storages. Pure.
import { namespaceFilesPath } from '../core/storage-layout.js';

export interface ExecutionRef { namespace: string; flowId: string; id: string }

export function executionStoragePath(e: ExecutionRef): string {
  return `${e.namespace.replace(/\./g, '/')}/${e.flowId}/executions/${e.id}`;
}

/**
 * The service's own files inside an execution's folder (cluster mode: each attempt's input and result, the runner's
 * channel to the controller, operator/kube/attempt-io.ts): not the execution's files, so never purged by a task.
 */
export const ATTEMPTS_FOLDER = '_attempts';

/** Files of one task run: outputs, downloads, batches. */
export function taskRunStoragePath(e: ExecutionRef, taskId: string, taskRunId: string): string {
  return `${executionStoragePath(e)}/tasks/${taskId}/${taskRunId}`;
}

/** An uploaded FILE input. */
export function inputStoragePath(e: ExecutionRef, inputId: string, filename: string): string {
  return `${executionStoragePath(e)}/inputs/${inputId}/${filename}`;
}

export { NAMESPACE_FILES_SEGMENT, namespaceFilesPath } from '../core/storage-layout.js';

const SCHEME = 'kestra://';

/** A rejected path or URI; `status` lets an HTTP layer answer 400. */
export function badPath(message: string): Error {
  return Object.assign(new Error(message), { status: 400 });
}

function decodeSegment(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/**
 * Splits a storage path or `kestra:///` URI into safe, decoded segments.
 * Rejects other schemes, NUL bytes, backslashes, encoded slashes, drive letters, `.`/`..` segments and `//`-rooted paths.
 */
export function storageSegments(pathOrUri: string): string[] {
  let rest = pathOrUri;
  if (rest.startsWith(SCHEME)) {
    rest = rest.slice(SCHEME.length);
    if (!rest.startsWith('/')) throw badPath(`Invalid internal storage URI (expected kestra:///path): ${pathOrUri}`);
  } else if (/^[a-z][a-z0-9+.-]*:/i.test(rest)) {
    throw badPath(`Unsupported storage URI (only kestra:/// is stored here): ${pathOrUri}`);
  }
  if (rest.startsWith('//')) throw badPath(`Absolute path rejected in internal storage: ${pathOrUri}`);
  const segments = rest.replace(/^\//, '').split('/').map(decodeSegment);
  if (segments.length === 0 || segments.every((s) => s === '')) throw badPath(`Empty internal storage path: ${pathOrUri}`);
  for (const segment of segments) {
    if (segment.includes('\0')) throw badPath(`NUL byte rejected in internal storage path: ${JSON.stringify(pathOrUri)}`);
    if (segment === '..' || segment === '.') throw badPath(`Path traversal rejected in internal storage: ${pathOrUri}`);
    if (segment.includes('\\') || segment.includes('/') || /^[a-z]:$/i.test(segment)) throw badPath(`Invalid internal storage path: ${pathOrUri}`);
  }
  return segments.filter((s) => s !== '');
}

/** URI of a namespace file (`read('scripts/a.py')`): `kestra:///<namespace as path>/_files/<path>`. */
export function namespaceFileUri(namespace: string, filePath: string): string {
  return storageUri(`${namespaceFilesPath(namespace)}/${filePath.replace(/^\/+/, '')}`);
}

/** Canonical URI of a storage path: `kestra:///` + percent-encoded segments. */
export function storageUri(pathOrUri: string): string {
  return `${SCHEME}/${storageSegments(pathOrUri).map(encodeURIComponent).join('/')}`;
}

