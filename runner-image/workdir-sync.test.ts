// The shared directory of a WorkingDirectory travels between task Pods through internal storage (real local storage,
// real files): every file comes back, including files named like Object.prototype members (`__proto__`).
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
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
