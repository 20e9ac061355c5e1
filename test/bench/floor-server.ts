// The bench's floor, run as its own process: a bare Koa server whose one route (POST /rows) reads the JSON body and
// commits one SQLite row per request, on a database file opened as the embedded store opens its own (openDatabase:
// WAL, synchronous NORMAL, the same pragmas). `node --import tsx test/bench/floor-server.ts <file.db>`; prints
// `listening on http://127.0.0.1:<port>` once it accepts requests.
import Koa from 'koa';
import { openDatabase } from '../../operator/store/sqlite/db.js';

const file = process.argv[2];
if (!file) throw new Error('usage: floor-server.ts <database file>');
const db = openDatabase(file);
db.exec('CREATE TABLE IF NOT EXISTS bench_floor (id INTEGER PRIMARY KEY, created TEXT NOT NULL, body TEXT NOT NULL)');
const insert = db.prepare('INSERT INTO bench_floor (created, body) VALUES (?, ?)');

const app = new Koa();
app.use(async (ctx) => {
  if (ctx.method !== 'POST' || ctx.path !== '/rows') { ctx.status = 404; return; }
  let body = '';
  for await (const chunk of ctx.req) body += chunk;
  const row = insert.run(new Date().toISOString(), JSON.stringify(JSON.parse(body || '{}')));
  ctx.body = { id: Number(row.lastInsertRowid) };
});
const server = app.listen(0, '127.0.0.1', () => {
  const address = server.address();
  console.log(`listening on http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`);
});
process.on('SIGTERM', () => { server.close(() => { db.close(); process.exit(0); }); server.closeAllConnections(); });
