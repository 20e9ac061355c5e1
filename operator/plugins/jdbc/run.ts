// What the jdbc Query and Queries tasks share, whatever the server: their common properties (Kestra's
// AbstractJdbcBaseQuery), the fetch modes (FETCH_ONE, FETCH bounded by JDBC_FETCH_MAX_BYTES, STORE streamed to an
// `.ion` row file, NONE), the per-statement outputs, Queries' transaction, and kill/timeout cancelling the statement on
// the server. The session (postgres-session.ts, mysql-session.ts) is opened by the caller.
import { randomUUID } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { limitError, limitsFromEnv, type Limits } from '../../core/limits.js';
import { p } from '../define.js';
import type { RunContext, TaskResult } from '../types.js';
import type { Row } from './cells.js';
import type { SqlSession } from './session.js';
import { bindNamed, splitStatements, type Dialect } from './sql-text.js';

export const FETCH_TYPES = ['FETCH_ONE', 'FETCH', 'STORE', 'NONE'] as const;
export type FetchType = typeof FETCH_TYPES[number];

/** Properties of every jdbc query task (Kestra's names). */
export const queryProps = {
  url: p.string().required().describe('JDBC URL of the database, as Kestra writes it (`jdbc:postgresql://host:5432/db`, `jdbc:mysql://host:3306/db`). One host; parameters the driver does not support are logged as ignored.'),
  username: p.string().describe('Database user (else the URL\'s `user` parameter).'),
  password: p.string().secret().describe('Password of the user (masked in everything the execution writes).'),
  sql: p.string().required().describe('SQL to run, rendered. `:name` placeholders are bound to `parameters` by the server (never spliced into the text).'),
  parameters: p.map().describe('Values of the `:name` placeholders in `sql` (typed: numbers, booleans, text, null; lists and maps are sent as arrays (PostgreSQL) or JSON text).'),
  fetchType: p.enum(FETCH_TYPES).default('NONE').describe('FETCH_ONE: the first row as `row`; FETCH: all rows as `rows` (bounded by JDBC_FETCH_MAX_BYTES); STORE: rows streamed to an `.ion` file (`uri`); NONE: no rows.'),
  fetch: p.boolean().describe('Deprecated (Kestra 0.19): `fetchType: FETCH`.'),
  fetchOne: p.boolean().describe('Deprecated (Kestra 0.19): `fetchType: FETCH_ONE`.'),
  store: p.boolean().describe('Deprecated (Kestra 0.19): `fetchType: STORE`.'),
  fetchSize: p.integer({ min: 1 }).default(10_000).describe('Rows read from the server per round trip (at most JDBC_MAX_FETCH_SIZE).'),
  timeZoneId: p.string().describe('Time zone of timestamps with a zone in the results (IANA name; default UTC).'),
};

/** Queries' own property. */
export const queriesProps = {
  transaction: p.boolean().default(true).describe('Run all statements in one transaction, rolled back if one fails (else each commits on its own).'),
};

export interface QueryProps {
  sql: string;
  parameters: Record<string, unknown> | undefined;
  fetchType: FetchType;
  fetch: boolean | undefined;
  fetchOne: boolean | undefined;
  store: boolean | undefined;
  fetchSize: number;
  timeZoneId: string | undefined;
}

/** The fetch mode, the deprecated booleans first (as Kestra reads them). */
export function fetchTypeOf(props: Pick<QueryProps, 'fetch' | 'fetchOne' | 'store' | 'fetchType'>): FetchType {
  if (props.fetch) return 'FETCH';
  if (props.fetchOne) return 'FETCH_ONE';
  if (props.store) return 'STORE';
  return props.fetchType;
}

/** Kestra's query Output: `row` (FETCH_ONE), `rows` (FETCH), `uri` (STORE), `size` (rows read). */
export interface StatementOutput { row?: Row | null; rows?: Row[]; uri?: string; size?: number }

interface Plan { fetchType: FetchType; fetchSize: number; limits: Limits }

async function fetchOne(session: SqlSession, text: string, values: unknown[], plan: Plan) {
  let row: Row | null = null;
  const isResult = await session.execute(text, values, 1, async (rows) => { row = rows[0] ?? null; return 'stop'; });
  const bytes = row ? Buffer.byteLength(JSON.stringify(row)) : 0;
  if (bytes > plan.limits.jdbcFetchMaxBytes) throw limitError('jdbcFetchMaxBytes', `The row fetched is ${bytes} bytes as JSON`, plan.limits);
  return { isResult, output: { row, size: row ? 1 : 0 } };
}

async function fetchAll(session: SqlSession, text: string, values: unknown[], plan: Plan) {
  const all: Row[] = [];
  let bytes = 0;
  const isResult = await session.execute(text, values, plan.fetchSize, async (rows) => {
    for (const row of rows) {
      bytes += Buffer.byteLength(JSON.stringify(row)) + 1;
      if (bytes > plan.limits.jdbcFetchMaxBytes) {
        throw limitError('jdbcFetchMaxBytes', `fetchType FETCH read ${all.length + 1} rows (${bytes} bytes as JSON); use fetchType STORE for large results`, plan.limits);
      }
      all.push(row);
    }
    return 'more';
  });
  return { isResult, output: { rows: all, size: all.length } };
}

/** Streams the rows, one JSON object a line (the JSON form of Kestra's ION rows), into a file of the task run. */
async function storeAll(ctx: RunContext, session: SqlSession, text: string, values: unknown[], plan: Plan) {
  const out = new PassThrough();
  let failure: unknown;
  const put = ctx.storage.put(`${ctx.storagePrefix}/${randomUUID()}.ion`, out);
  put.catch((err) => { failure = err; out.destroy(); });
  let size = 0;
  let isResult = false;
  try {
    isResult = await session.execute(text, values, plan.fetchSize, async (rows) => {
      size += rows.length;
      if (!out.write(rows.map((r) => JSON.stringify(r) + '\n').join(''))) {
        await new Promise<void>((res) => { out.once('drain', res); out.once('close', res); });
      }
      if (failure) throw failure;
      return 'more';
    });
    out.end();
  } catch (err) {
    out.destroy();
    await put.catch(() => {});
    throw err;
  }
  const uri = await put;
  return { isResult, output: { uri, size } };
}

async function runStatement(ctx: RunContext, session: SqlSession, text: string, values: unknown[], plan: Plan): Promise<{ isResult: boolean; output: StatementOutput }> {
  ctx.logger.debug(`Starting query: ${text}`);
  switch (plan.fetchType) {
    case 'FETCH_ONE': return fetchOne(session, text, values, plan);
    case 'FETCH': return fetchAll(session, text, values, plan);
    case 'STORE': return storeAll(ctx, session, text, values, plan);
    case 'NONE': {
      // The statement runs to its end; rows it returns are read and dropped, never kept.
      const isResult = await session.execute(text, values, plan.fetchSize, async () => 'more');
      return { isResult, output: {} };
    }
  }
}

/** Opens the session, cancels its statement on kill or timeout (the task's `timeout`), always closes it. */
export async function withSession<T>(ctx: RunContext, open: () => Promise<SqlSession>, work: (s: SqlSession) => Promise<T>): Promise<T> {
  const session = await open();
  const onAbort = () => {
    ctx.logger.warn('Cancelling the running statement (task killed or timed out)');
    void session.cancel().catch((err) => ctx.logger.warn(`Cancel failed: ${(err as Error).message}`)).finally(() => session.close());
  };
  ctx.signal.addEventListener('abort', onAbort, { once: true });
  try {
    return await work(session);
  } finally {
    ctx.signal.removeEventListener('abort', onAbort);
    if (!ctx.signal.aborted) await session.close();
  }
}

function plan(props: QueryProps): Plan {
  const limits = limitsFromEnv(process.env);
  if (props.fetchSize > limits.jdbcMaxFetchSize) throw limitError('jdbcMaxFetchSize', `Property 'fetchSize' is ${props.fetchSize}`, limits);
  return { fetchType: fetchTypeOf(props), fetchSize: props.fetchSize, limits };
}

function bindAll(ctx: RunContext, statements: string[], props: QueryProps, dialect: Dialect) {
  const parameters = props.parameters ?? {};
  const used = new Set<string>();
  const bound = statements.map((s) => {
    const b = bindNamed(s, parameters, dialect);
    b.used.forEach((n) => used.add(n));
    return b;
  });
  const unused = Object.keys(parameters).filter((k) => !used.has(k));
  if (unused.length) ctx.logger.warn(`Parameters not used by the SQL: ${unused.join(', ')}`);
  return bound;
}

function metric(fetchType: FetchType, size: number) {
  return [{ name: 'fetch.size', type: 'counter' as const, value: size, tags: { fetch: String(fetchType === 'FETCH' || fetchType === 'FETCH_ONE'), store: String(fetchType === 'STORE') } }];
}

/** Query: one statement (several are refused, as Kestra does); its output is the task's. */
export async function runQuery(ctx: RunContext, props: QueryProps, dialect: Dialect, open: () => Promise<SqlSession>): Promise<TaskResult> {
  const statements = splitStatements(props.sql, dialect);
  if (statements.length === 0) throw new Error("Property 'sql' holds no SQL statement");
  if (statements.length > 1) throw new Error('Query task supports only a single SQL statement (got ' + statements.length + '). Use the Queries task to run multiple statements.');
  const pl = plan(props);
  const [bound] = bindAll(ctx, statements, props, dialect);
  const { isResult, output } = await withSession(ctx, open, (s) => runStatement(ctx, s, bound.text, bound.values, pl));
  const size = isResult ? output.size ?? 0 : 0;
  return { state: 'SUCCESS', outputs: isResult ? { ...output } : {}, metrics: metric(pl.fetchType, size) };
}

/** Queries: the statements of `sql` in order, in one transaction unless `transaction: false`; one output per result. */
export async function runQueries(ctx: RunContext, props: QueryProps & { transaction: boolean }, dialect: Dialect, open: () => Promise<SqlSession>): Promise<TaskResult> {
  const statements = splitStatements(props.sql, dialect);
  if (statements.length === 0) throw new Error("Property 'sql' holds no SQL statement");
  const pl = plan(props);
  const bound = bindAll(ctx, statements, props, dialect);
  const outputs: StatementOutput[] = [];
  let total = 0;
  await withSession(ctx, open, async (s) => {
    if (props.transaction) await s.begin();
    try {
      for (const [i, b] of bound.entries()) {
        if (ctx.signal.aborted) break;
        let r;
        try { r = await runStatement(ctx, s, b.text, b.values, pl); } catch (err) {
          throw new Error(`Statement ${i + 1} of ${bound.length} failed: ${(err as Error).message}`, { cause: err });
        }
        if (r.isResult) {
          outputs.push(r.output);
          total += r.output.size ?? 0;
        }
      }
      if (props.transaction && !ctx.signal.aborted) await s.commit();
    } catch (err) {
      if (props.transaction && !ctx.signal.aborted) {
        await s.rollback().catch((e) => ctx.logger.warn(`Rollback failed: ${(e as Error).message}`));
        ctx.logger.warn('Transaction rolled back');
      }
      throw err;
    }
  });
  return { state: 'SUCCESS', outputs: { outputs }, metrics: metric(pl.fetchType, total) };
}
