// What the jdbc tasks need from a database connection, implemented once per server kind (postgres-session.ts,
// mysql-session.ts): run one statement with bound values and hand its rows over in batches (the driver streams them
// from the server, so a consumer that writes them out never holds the whole result), transactions, cancel, close.
import type { Row } from './cells.js';

/** What a consumer of a batch wants next: more rows, or none (the rest of the result is not read into memory). */
export type Next = 'more' | 'stop';

export interface SqlSession {
  /**
   * Runs one statement; `consume` gets its rows `fetchSize` at a time (awaited: back-pressure). Resolves whether the
   * statement produced a result set (a SELECT with no rows does; an INSERT without RETURNING does not).
   */
  execute(sql: string, values: unknown[], fetchSize: number, consume: (rows: Row[]) => Promise<Next>): Promise<boolean>;
  begin(): Promise<void>;
  commit(): Promise<void>;
  rollback(): Promise<void>;
  /** Asks the server to stop the running statement (from a second connection), for kill and timeout. */
  cancel(): Promise<void>;
  close(): Promise<void>;
}

/** Where a task connects: for errors (host:port, database, user; never the password). */
export interface Endpoint { what: string; host: string; port: number; database?: string; user?: string }

export function describeEndpoint(e: Endpoint): string {
  return `${e.what} at ${e.host.includes(':') ? `[${e.host}]` : e.host}:${e.port}${e.database ? `/${e.database}` : ''}${e.user ? ` as '${e.user}'` : ''}`;
}

/** A connection failure as an error naming the endpoint; the password is cut out of the driver's message if it is there. */
export function connectError(e: Endpoint, err: unknown, password: string | undefined): Error {
  let msg = err instanceof Error ? err.message : String(err);
  if (password) msg = msg.split(password).join('******');
  if (!msg) msg = (err as { code?: string })?.code ?? 'connection failed';
  return new Error(`Cannot connect to ${describeEndpoint(e)}: ${msg}`);
}
