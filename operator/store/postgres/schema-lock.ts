// Schema creation of a PostgreSQL table shared by several processes (operator replicas, API pods): the statements run
// in one transaction under an advisory lock named after the table, so concurrent `CREATE ... IF NOT EXISTS` do not race.
import type { Pool, PoolClient } from 'pg';

export async function withSchemaLock(pool: Pool, table: string, create: (client: PoolClient) => Promise<void>): Promise<void> {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`flowpilot:schema:${table}`]);
    await create(client);
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}
