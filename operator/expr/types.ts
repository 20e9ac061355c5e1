// Public types of the expression engine: the injected services and the renderer interface.

export interface RenderServices {
  /** Secret value by name; undefined → ExpressionError "Secret `X` not found". */
  secret?(name: string): string | undefined;
  /** KV lookup; `kv('key')` uses vars.flow.namespace by default. */
  kv?(namespace: string, key: string): { found: boolean; value?: unknown };
  /** Content (utf-8) of an internal-storage file, for `read('kestra:///...')`. */
  read?(uri: string): string;
  /** Size in bytes of an internal-storage file (undefined when it does not exist), for `fileSize()`, `fileExists()`, `isFileEmpty()`; same access rules as `read()`. */
  stat?(uri: string): number | undefined;
  /** The current execution's ERROR log lines (Kestra's LogEntry fields), for `errorLogs()`: runnable tasks only. */
  errorLogs?(): unknown[];
  /** Called with every secret value read, so callers can mask it in logs. */
  onSecret?(value: string): void;
  /** Clock for `now()`; defaults to the system clock. */
  now?(): Date;
}

export interface Renderer {
  /** Renders a template to a string. */
  render(template: string, vars: Record<string, unknown>): string;
  /** Native value of a lone `{{ expr }}`, else the rendered string; JSON arrays/objects are parsed. */
  renderTyped(value: unknown, vars: Record<string, unknown>): unknown;
  /** Recursively renders every string (keys too) in objects and arrays. */
  renderValue<T>(value: T, vars: Record<string, unknown>): T;
}
