// Identifiers: 22-character base62 random ids, the shape Kestra uses for executions and task runs.
import { randomBytes } from 'node:crypto';

const ALPHABET = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';

/** Random bytes drawn 22 KiB at a time: one system call per thousand ids instead of one per id (fan-outs create 100,000). */
let pool = Buffer.alloc(0);
let offset = 0;

export function newId(): string {
  if (offset + 22 > pool.length) { pool = randomBytes(22 * 1024); offset = 0; }
  let out = '';
  for (let i = 0; i < 22; i++) out += ALPHABET[pool[offset + i]! % 62];
  offset += 22;
  return out;
}

/** Deterministic id derived from parts (for work that must be found again after a restart). */
export function derivedId(...parts: string[]): string {
  let h1 = 0x811c9dc5, h2 = 0x01000193, h3 = 0x9e3779b9;
  const s = parts.join('\u0000');
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 16777619) >>> 0;
    h2 = Math.imul(h2 ^ c, 2246822519) >>> 0;
    h3 = Math.imul(h3 ^ c, 3266489917) >>> 0;
  }
  let out = '';
  for (const h of [h1, h2, h3, (h1 ^ h3) >>> 0]) {
    let v = h;
    for (let i = 0; i < 6 && out.length < 22; i++) { out += ALPHABET[v % 62]; v = Math.floor(v / 62); }
  }
  return out;
}
