// Access tokens: the service keeps only hashes (SHA-256 for configured tokens, keyed for job owners) and compares them
// in constant time.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { SecretBox } from '../secrets/sealed.js';

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

  /** True when `token` is the owner's of a job stored with `storedHash` (constant-time comparison). */
  owns(token: string | undefined, storedHash: string): boolean {
    if (!token) return false;
    const a = Buffer.from(this.tokenHash(token), 'hex');
    const b = Buffer.from(storedHash, 'hex');
    return a.length === b.length && timingSafeEqual(a, b);
  }

  seal(folder: string, jobId: string): string { return this.box.seal(folder, `inference job folder ${jobId}`); }

  open(sealed: string, jobId: string): string | undefined { return this.box.open(sealed, `inference job folder ${jobId}`); }
}
