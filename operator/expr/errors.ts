// Error type of the expression engine: every failure while parsing or rendering a template
// (missing variable, unknown filter, sandbox violation, bad argument) is an ExpressionError.

export class ExpressionError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ExpressionError';
  }
}

/** Shortens a template for error messages so a huge script body does not flood the log. */
export function excerpt(template: string, max = 200): string {
  return template.length > max ? `${template.slice(0, max)}…` : template;
}
