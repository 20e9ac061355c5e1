// The layout of internal storage, in one place: an execution's files live under
// `<namespace with dots as slashes>/<flowId>/executions/<executionId>/` (Kestra's layout).
export interface ExecutionRef { namespace: string; flowId: string; id: string }

export function executionStoragePath(e: ExecutionRef): string {
  return `${e.namespace.replace(/\./g, '/')}/${e.flowId}/executions/${e.id}`;
}

/** Files of one task run: outputs, downloads, batches. */
export function taskRunStoragePath(e: ExecutionRef, taskId: string, taskRunId: string): string {
  return `${executionStoragePath(e)}/tasks/${taskId}/${taskRunId}`;
}

/** An uploaded FILE input. */
export function inputStoragePath(e: ExecutionRef, inputId: string, filename: string): string {
  return `${executionStoragePath(e)}/inputs/${inputId}/${filename}`;
}
