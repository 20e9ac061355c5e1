// Kubernetes Status objects and the ApiError thrown by the test server's handlers (code, reason, details, causes).
export interface StatusCause { reason?: string; message: string; field?: string }
export interface StatusDetails { name?: string; group?: string; kind?: string; uid?: string; causes?: StatusCause[]; retryAfterSeconds?: number }

export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, unknown>;
  status: 'Success' | 'Failure';
  message?: string;
  reason?: string;
  details?: StatusDetails;
  code: number;
}

export class ApiError extends Error {
  constructor(readonly code: number, readonly reason: string, message: string, readonly details?: StatusDetails) {
    super(message);
  }
  toStatus(): Status {
    const s: Status = { kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Failure', message: this.message, reason: this.reason, code: this.code };
    if (this.details) s.details = this.details;
    return s;
  }
}

/** `flows.flowpilot.io` or `pods` (core group): how the real server names a resource in messages. */
export const groupResource = (group: string, plural: string): string => (group ? `${plural}.${group}` : plural);

export const notFound = (group: string, plural: string, name: string): ApiError =>
  new ApiError(404, 'NotFound', `${groupResource(group, plural)} "${name}" not found`, { name, group, kind: plural });

export const alreadyExists = (group: string, plural: string, name: string): ApiError =>
  new ApiError(409, 'AlreadyExists', `${groupResource(group, plural)} "${name}" already exists`, { name, group, kind: plural });

export const conflict = (group: string, plural: string, name: string, why = 'the object has been modified; please apply your changes to the latest version and try again'): ApiError =>
  new ApiError(409, 'Conflict', `Operation cannot be fulfilled on ${groupResource(group, plural)} "${name}": ${why}`, { name, group, kind: plural });

export const badRequest = (message: string): ApiError => new ApiError(400, 'BadRequest', message);

export const methodNotAllowed = (verb: string): ApiError =>
  new ApiError(405, 'MethodNotAllowed', `the server does not allow this method on the requested resource (${verb})`);

/** 422 Invalid: `Kind.group "name" is invalid: [field: message, ...]` with one cause per field error. */
export function invalid(kind: string, group: string, name: string, causes: StatusCause[]): ApiError {
  const qualified = group ? `${kind}.${group}` : kind;
  const parts = causes.map((c) => (c.field ? `${c.field}: ${c.message}` : c.message));
  const list = parts.length === 1 ? parts[0] : `[${parts.join(', ')}]`;
  return new ApiError(422, 'Invalid', `${qualified} "${name}" is invalid: ${list}`, { name, group, kind, causes });
}

export const successStatus = (details?: StatusDetails): Status => ({
  kind: 'Status', apiVersion: 'v1', metadata: {}, status: 'Success', code: 200, ...(details ? { details } : {}),
});
