// Where the key that seals SECRET inputs comes from: the ENCRYPTION_KEY setting (base64 of 32 bytes; in cluster mode
// from a Kubernetes Secret the chart creates), else, embedded, `<DATA_DIR>/encryption.key`, created (mode 0600) at first start.
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ENCRYPTION_KEY_ENV } from './env.js';
import { KEY_BYTES, SecretBox } from './sealed.js';

export { ENCRYPTION_KEY_ENV };
export const KEY_FILE = 'encryption.key';

/** The key in `text` (base64 of 32 bytes); `where` names its origin in the error. */
export function parseEncryptionKey(text: string, where: string = ENCRYPTION_KEY_ENV): Buffer {
  const t = text.trim();
  const key = Buffer.from(t, 'base64');
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(t) || key.length !== KEY_BYTES) {
    throw new Error(`${where} must be the base64 of ${KEY_BYTES} random bytes (e.g. \`openssl rand -base64 32\`), got ${key.length} bytes`);
  }
  return key;
}

/** The box of ENCRYPTION_KEY, or undefined when it is not set. */
export function boxFromEnv(env: NodeJS.ProcessEnv): SecretBox | undefined {
  const raw = env[ENCRYPTION_KEY_ENV];
  return raw && raw.trim() ? new SecretBox(parseEncryptionKey(raw)) : undefined;
}

/** Embedded mode: ENCRYPTION_KEY, else the key file of the data directory, created on first use. */
export function embeddedBox(env: NodeJS.ProcessEnv, dataDir: string): SecretBox {
  const fromEnv = boxFromEnv(env);
  if (fromEnv) return fromEnv;
  const file = join(dataDir, KEY_FILE);
  try {
    writeFileSync(file, `${randomBytes(KEY_BYTES).toString('base64')}\n`, { flag: 'wx', mode: 0o600 });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  return new SecretBox(parseEncryptionKey(readFileSync(file, 'utf8'), file));
}
