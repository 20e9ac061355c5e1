// Validation error types of the flow model: one issue per offending field, with a readable path
// ("tasks[1].retry.interval") and a human reason. Thrown by parseFlow/validateFlow and resolveInputs.

export interface ValidationIssue { path: string; message: string }

/** "path: message" or just the message when the issue concerns the whole document. */
export function formatIssue(issue: ValidationIssue): string {
  return issue.path ? `${issue.path}: ${issue.message}` : issue.message;
}

function summary(prefix: string, errors: ValidationIssue[]): string {
  if (errors.length === 0) return prefix;
  const more = errors.length > 1 ? ` (and ${errors.length - 1} more error${errors.length > 2 ? 's' : ''})` : '';
  return `${prefix}: ${formatIssue(errors[0])}${more}`;
}

/** A flow document that cannot be accepted; `errors` lists every problem found. */
export class FlowValidationError extends Error {
  readonly errors: ValidationIssue[];
  constructor(errors: ValidationIssue[]) {
    super(summary('Invalid flow', errors));
    this.name = 'FlowValidationError';
    this.errors = errors;
  }
}

/** Execution inputs that cannot be accepted; paths are "inputs.<id>". */
export class InputValidationError extends Error {
  readonly errors: ValidationIssue[];
  constructor(errors: ValidationIssue[]) {
    super(summary('Invalid inputs', errors));
    this.name = 'InputValidationError';
    this.errors = errors;
  }
}
