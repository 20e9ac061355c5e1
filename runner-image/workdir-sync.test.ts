// The shared directory of a WorkingDirectory travels between task Pods through internal storage (real local storage,
// real files): every file comes back, including files named like Object.prototype members (`__proto__`), and a file
// deleted by a child stays deleted.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { LocalStorage } from '../operator/storage/local.js';
import { tempDir } from '../operator/store/sqlite/test-fixtures.js';
import { restoreSharedDir, saveSharedDir, type SharedDir } from './workdir-sync.js';

const cleanups: (() => void)[] = [];
afterEach(() => { for (const c of cleanups.splice(0)) c(); });

it('saves and restores every file, `__proto__` and `constructor` included', async () => {
  const tmp = tempDir('workdir-sync-');
  cleanups.push(() => tmp.remove());
  const storage = new LocalStorage(join(tmp.dir, 'storage'));
  const first: SharedDir = { dir: join(tmp.dir, 'pod1'), storagePath: 'ns/f/e/_workdirs/w.json', uri: 'kestra:///ns/f/e/_workdirs/w.json' };
  mkdirSync(join(first.dir, 'sub'), { recursive: true });
  for (const name of ['__proto__', 'constructor', 'sub/__proto__', 'plain.txt']) writeFileSync(join(first.dir, name), name);
  await saveSharedDir(storage, first);
  const second: SharedDir = { ...first, dir: join(tmp.dir, 'pod2') };
  await restoreSharedDir(storage, second);
  for (const name of ['__proto__', 'constructor', 'sub/__proto__', 'plain.txt']) {
    expect(readFileSync(join(second.dir, name), 'utf8')).toBe(name);
  }
});

it('a directory emptied by a child comes back empty (seeded, not stale); one never made is not saved', async () => {
  const tmp = tempDir('workdir-sync-');
  cleanups.push(() => tmp.remove());
  const storage = new LocalStorage(join(tmp.dir, 'storage'));
  const pod = (n: number): SharedDir => ({ dir: join(tmp.dir, `pod${n}`), storagePath: 'ns/f/e/_workdirs/w.json', uri: 'kestra:///ns/f/e/_workdirs/w.json' });
  await saveSharedDir(storage, pod(0)); // its seeding failed: no directory, no snapshot (the next child seeds)
  expect(await storage.exists(pod(0).uri)).toBe(false);
  mkdirSync(pod(1).dir, { recursive: true });
  writeFileSync(join(pod(1).dir, 'seeded.txt'), 'x');
  await saveSharedDir(storage, pod(1));
  await restoreSharedDir(storage, pod(2));
  rmSync(join(pod(2).dir, 'seeded.txt'));
  await saveSharedDir(storage, pod(2));
  await restoreSharedDir(storage, pod(3));
  expect(existsSync(pod(3).dir)).toBe(true);
  expect(readdirSync(pod(3).dir)).toEqual([]);
});
