// Following an execution's log on a real PostgreSQL server while several writers (task Pods) commit at once: their
// transactions commit out of id order, and linesAfter must still deliver every line exactly once, the reader holding
// one page at a time.
import pg from 'pg';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startPostgres } from '../../../test/support/services.js';
import type { LogCursor } from '../types.js';
import { PgLogStore } from './logs.js';

let stopPg: () => Promise<void>;
let pool: pg.Pool;
let store: PgLogStore;
let tableNo = 0;

beforeAll(async () => {
  const service = await startPostgres();
  stopPg = service.stop;
  pool = new pg.Pool({ connectionString: service.url, max: 24 });
});
afterAll(async () => { await pool?.end(); await stopPg?.(); });
beforeEach(async () => {
  store = new PgLogStore(pool, { table: `follow_${++tableNo}` });
  await store.init();
});

/** A writer's transaction: BEGIN, then inserts (each taking its id from the sequence now), then COMMIT when told. */
async function openWriter(): Promise<{ insert(message: string): Promise<string>; claimXid(): Promise<void>; commit(): Promise<void> }> {
  const client = await pool.connect();
  await client.query('BEGIN');
  return {
    /** Takes the transaction's id now (PostgreSQL gives one at the first write otherwise). */
    async claimXid() { await client.query('SELECT txid_current()'); },
    async insert(message) {
      const { rows } = await client.query<{ id: string }>(
        `INSERT INTO ${store.table} (execution_id, namespace, flow_id, level, ts, message) VALUES ('e1', 'ns', 'f', 2, now(), $1) RETURNING id`, [message]);
      return rows[0]!.id;
    },
    async commit() { try { await client.query('COMMIT'); } finally { client.release(); } },
  };
}

/** Reads every page past `cursor` now; returns the messages and the new cursor. */
async function readAll(cursor: LogCursor, limit: number, final = false): Promise<{ messages: string[]; cursor: LogCursor }> {
  const messages: string[] = [];
  for (;;) {
    const page = await store.linesAfter('e1', cursor, {}, limit, { final });
    messages.push(...page.lines.map((l) => l.message));
    cursor = page.cursor;
    if (page.lines.length < limit) return { messages, cursor };
  }
}

describe('PgLogStore.linesAfter with concurrent writers', () => {
  it('delivers a line committed after a line with a higher id was read, once', async () => {
    const slow = await openWriter();
    const slowId = await slow.insert('slow');
    const fast = await openWriter();
    const fastId = await fast.insert('fast');
    expect(BigInt(fastId)).toBeGreaterThan(BigInt(slowId));
    await fast.commit(); // visible now, while the line with the lower id is not
    const first = await readAll('', 10);
    await slow.commit();
    const second = await readAll(first.cursor, 10);
    const third = await readAll(second.cursor, 10);
    expect([...first.messages, ...second.messages, ...third.messages].sort()).toEqual(['fast', 'slow']);
    expect(third.messages).toEqual([]);
  });

  it('delivers a line whose transaction began first but inserted and committed last', async () => {
    const early = await openWriter();
    await early.claimXid();
    const late = await openWriter();
    await late.insert('second writer');
    await early.insert('first writer'); // higher id, older transaction
    await late.commit();
    const first = await readAll('', 10);
    await early.commit();
    const rest = await readAll(first.cursor, 10);
    expect([...first.messages, ...rest.messages].sort()).toEqual(['first writer', 'second writer']);
  });

  it('the final read of a follow takes what is visible even while another transaction is still open', async () => {
    const open = await openWriter();
    await open.insert('still open');
    const done = await openWriter();
    await done.insert('committed');
    await done.commit();
    expect((await readAll('', 10)).messages).toEqual([]); // held back: a line below could still appear
    expect((await readAll('', 10, true)).messages).toEqual(['committed']);
    await open.commit();
    expect((await readAll('', 10)).messages.sort()).toEqual(['committed', 'still open']);
  });

  it('loses and repeats nothing while 12 writers commit out of id order and a reader follows in small pages', async () => {
    const writers = 12;
    const transactions = 15;
    const expected: string[] = [];
    const write = async (w: number): Promise<void> => {
      for (let t = 0; t < transactions; t++) {
        const tx = await openWriter();
        const lines = 1 + ((w + t) % 3);
        for (let l = 0; l < lines; l++) {
          const message = `w${w}-t${t}-l${l}`;
          expected.push(message);
          await tx.insert(message);
          await new Promise((r) => setTimeout(r, (w * 7 + t * 3 + l) % 5)); // commits interleave out of id order
        }
        await tx.commit();
      }
    };
    const delivered: string[] = [];
    let cursor: LogCursor = '';
    let writing = true;
    let reads = 0;
    const follow = (async () => {
      while (writing) {
        const page = await store.linesAfter('e1', cursor, {}, 7);
        expect(page.lines.length).toBeLessThanOrEqual(7);
        delivered.push(...page.lines.map((l) => l.message));
        cursor = page.cursor;
        reads++;
        if (page.lines.length < 7) await new Promise((r) => setTimeout(r, 2));
      }
    })();
    await Promise.all(Array.from({ length: writers }, (_, w) => write(w)));
    writing = false;
    await follow;
    delivered.push(...(await readAll(cursor, 7)).messages);
    expect(reads).toBeGreaterThan(10); // the reader ran while the writers did
    expect(new Set(delivered).size, 'no line delivered twice').toBe(delivered.length);
    expect(delivered.slice().sort()).toEqual(expected.slice().sort());
    // Some transaction did commit out of id order (or the case proves nothing): ids of lines by commit differ from id order.
    const { rows } = await pool.query<{ inversions: string }>(
      `SELECT count(*) AS inversions FROM ${store.table} a JOIN ${store.table} b ON a.id < b.id AND a.txid > b.txid`);
    expect(Number(rows[0]!.inversions)).toBeGreaterThan(0);
  }, 120_000);

  it('refuses a malformed cursor', async () => {
    await expect(store.linesAfter('e1', '12; DROP TABLE x')).rejects.toThrow(/invalid log cursor/);
  });
});

describe('PgLogStore on a table of an earlier version (no txid column)', () => {
  it('adds the column once and follows its old lines first', async () => {
    const table = `follow_old_${++tableNo}`;
    await pool.query(`CREATE TABLE ${table} (id bigserial PRIMARY KEY, execution_id text NOT NULL, namespace text COLLATE "C" NOT NULL,
      flow_id text NOT NULL, task_id text, task_run_id text, attempt integer, level smallint NOT NULL, ts timestamptz NOT NULL,
      message text NOT NULL, tsv tsvector GENERATED ALWAYS AS (to_tsvector('simple', message)) STORED)`);
    await pool.query(`INSERT INTO ${table} (execution_id, namespace, flow_id, level, ts, message) VALUES ('e1', 'ns', 'f', 2, now(), 'old')`);
    store = new PgLogStore(pool, { table });
    store.append([{ executionId: 'e1', namespace: 'ns', flowId: 'f', level: 'INFO', timestamp: new Date().toISOString(), message: 'new' }]);
    const page = await store.linesAfter('e1', '', {}, 1);
    expect(page.lines.map((l) => l.message)).toEqual(['old']);
    expect((await store.linesAfter('e1', page.cursor)).lines.map((l) => l.message)).toEqual(['new']);
  });
});
