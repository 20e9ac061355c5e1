// Access tokens: the service keeps only SHA-256 hashes and compares them in constant time.
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

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
