// Access tokens: the service keeps only hashes (SHA-256 for configured tokens, keyed for job owners) and compares them
// in constant time.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { boxFromEnv, ENCRYPTION_KEY_ENV } from '../secrets/key.js';
import { KEY_BYTES, SecretBox } from '../secrets/sealed.js';

export const hashToken = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex');

/** A fresh token an operator can hand out (and configure through ACCESS_TOKENS or its hash). */
export const newAccessToken = (): string => randomBytes(24).toString('base64url');

/** True when `token` hashes to one of `hashes`; every hash is compared so timing reveals nothing. */
export function tokenMatches(token: string, hashes: readonly string[]): boolean {
  const h = Buffer.from(hashToken(token), 'hex');
  let ok = false;
  for (const candidate of hashes) {
    const c = Buffer.from(candidate, 'hex');
    if (c.length === h.length && timingSafeEqual(c, h)) ok = true;
  }
  return ok;
}

/** Extracts the token of an `Authorization: Bearer <token>` header. */
export function bearerToken(header: string | undefined): string | undefined {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
  return m?.[1];
}

/**
 * The secrets of job rows: the owner's token as a keyed hash (HMAC under the service's encryption key, so a copy of
 * the job DB does not allow guessing tokens offline) and the bucket folder `<token>/<session>` sealed until the job ends.
 */
export class JobSecrets {
  constructor(private box: SecretBox) {}

  tokenHash(token: string): string { return this.rehash(hashToken(token)); }

  rehash(sha256Hex: string): string { return this.box.keyedHash(sha256Hex, 'inference job owner'); }

  /**
   * The stored forms of `token` as a job owner: the keyed hash, then the unkeyed SHA-256 that InferenceJob resources
   * written before the one job model hold in `spec.tokenHash` (still recognised, so those jobs keep their owner).
   */
  ownerHashes(token: string): [string, string] {
    const plain = hashToken(token);
    return [this.rehash(plain), plain];
  }

  /** True when `token` is the owner's of a job stored with `storedHash`, in either form (constant-time comparisons). */
  owns(token: string | undefined, storedHash: string): boolean {
    if (!token) return false;
    const b = Buffer.from(storedHash, 'hex');
    let ok = false;
    for (const h of this.ownerHashes(token)) {
      const a = Buffer.from(h, 'hex');
      if (a.length === b.length && timingSafeEqual(a, b)) ok = true;
    }
    return ok;
  }

  /**
   * Task id of a submission with an Idempotency-Key: keyed like the owner's hash, so every API replica (cluster mode,
   * one ENCRYPTION_KEY) maps a repeated submission to the same job, while the id, stored and shown beside the key, does
   * not allow guessing the token offline (an unkeyed hash of token and key would).
   */
  idempotentTaskId(token: string, key: string): string {
    return this.box.keyedHash(`${token}\0${key}`, 'inference idempotent task id').slice(0, 32);
  }

  seal(folder: string, jobId: string): string { return this.box.seal(folder, `inference job folder ${jobId}`); }

  open(sealed: string, jobId: string): string | undefined { return this.box.open(sealed, `inference job folder ${jobId}`); }
}

/**
 * Cluster mode (API and operator): the job secrets under ENCRYPTION_KEY (the chart's Secret). Without it, when access
 * tokens are configured (`required`), start fails naming the variable; with no tokens every submission is refused
 * anyway, so a key of this process alone serves.
 */
export function clusterJobSecrets(env: NodeJS.ProcessEnv, required: boolean): JobSecrets {
  const box = boxFromEnv(env);
  if (box) return new JobSecrets(box);
  if (required) throw new Error(`${ENCRYPTION_KEY_ENV} is required for batch inference in cluster mode (job owners are kept as a keyed hash under it)`);
  return new JobSecrets(new SecretBox(randomBytes(KEY_BYTES)));
}
