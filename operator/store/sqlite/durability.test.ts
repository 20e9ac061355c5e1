// Durability of the embedded store: committed data is visible from another instance without close(), and survives
// a writer process killed with SIGKILL; the schema migration is recorded and not re-applied.
import Database from 'better-sqlite3';
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { MIGRATIONS } from './schema.js';
import { openEmbeddedStores } from './index.js';
import { flowSource, logLine, sampleExecution, sampleFlow, tempDir } from './test-fixtures.js';

const repoRoot = fileURLToPath(new URL('../../..', import.meta.url));
const childScript = fileURLToPath(new URL('./crash-writer.child.ts', import.meta.url));

let tmp: ReturnType<typeof tempDir>;
beforeEach(() => { tmp = tempDir('store-durability-'); });
afterEach(() => tmp.remove());

describe('embedded store durability', () => {
  it('another instance reads committed data while the writer is still open (never closed)', async () => {
    const writer = openEmbeddedStores(tmp.dir);
    const flow = sampleFlow('company', 'f');
    await writer.flows.save(flow, flowSource(flow));
    const { execution } = await writer.executions.create(sampleExecution('e1', { labels: [{ key: 'k', value: 'v' }] }));
    execution.state.current = 'SUCCESS';
    await writer.executions.update(execution, 1);
    await writer.executions.addCommand('e1', { type: 'restart' });
    await writer.kv.set({ namespace: 'company', key: 'k', value: 3 });
    writer.logs.append([logLine('e1', 'flushed line')]);
    await writer.logs.flush();

    const reader = openEmbeddedStores(tmp.dir);
    try {
      expect((await reader.flows.get('company', 'f'))?.revision).toBe(1);
      expect(await reader.executions.get('e1')).toMatchObject({ resourceVersion: 2, execution: { state: { current: 'SUCCESS' } } });
      expect((await reader.executions.search({ labels: { k: 'v' } })).total).toBe(1);
      expect((await reader.executions.pendingCommands('e1')).map((c) => c.command.type)).toEqual(['restart']);
      expect((await reader.kv.get('company', 'k'))?.value).toBe(3);
      expect((await reader.logs.search({ q: 'flushed' })).total).toBe(1);
    } finally {
      await reader.close();
      await writer.close();
    }
  });

  it('records the schema version once across reopenings', async () => {
    await openEmbeddedStores(tmp.dir).close();
    await openEmbeddedStores(tmp.dir).close();
    const db = new Database(path.join(tmp.dir, 'store.db'), { readonly: true });
    try {
      expect(db.prepare('SELECT version FROM schema_version ORDER BY version').all()).toEqual(
        MIGRATIONS.map((_, i) => ({ version: i + 1 })));
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    } finally {
      db.close();
    }
  });

  it('keeps every write a writer reported before it was killed with SIGKILL', async () => {
    const created = new Set<string>();
    const updated = new Map<string, number>();
    const child = spawn(process.execPath, ['--import', 'tsx', childScript, tmp.dir], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => { stderr += d.toString(); });
    let pending = '';
    child.stdout.on('data', (data: Buffer) => {
      pending += data.toString();
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      for (const line of lines) {
        const [kind, id, rv] = line.split(' ');
        if (kind === 'C') created.add(id);
        if (kind === 'U') updated.set(id, Number(rv));
      }
      if (created.size >= 300 && !child.killed) child.kill('SIGKILL');
    });
    const [, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((resolve) =>
      child.on('close', (code, sig) => resolve([code, sig])));
    expect(stderr).toBe('');
    expect(signal).toBe('SIGKILL');
    expect(created.size).toBeGreaterThanOrEqual(300);

    const stores = openEmbeddedStores(tmp.dir);
    try {
      const missing = [...created].filter((id) => stores.executions.getSync(id) === undefined);
      expect(missing).toEqual([]);
      for (const [id, rv] of updated) {
        const stored = stores.executions.getSync(id)!;
        expect(stored.resourceVersion).toBeGreaterThanOrEqual(rv);
        expect(stored.execution.state.current).toBe('RUNNING');
      }
      expect((await stores.executions.listActive()).length).toBeGreaterThanOrEqual(created.size);
    } finally {
      await stores.close();
    }
  });
});
