// Encryption at rest of SECRET input values (AES-256-GCM): a sealed value is `fpenc1:` + base64(iv | ciphertext | tag),
// bound to the execution it was sealed for (namespace, flow, original execution id, input id as additional data), so a
// sealed value copied into another execution or another input never opens there.
import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from 'node:crypto';

export const SEALED_PREFIX = 'fpenc1:';
const IV_BYTES = 12;
const TAG_BYTES = 16;
export const KEY_BYTES = 32;

/** The additional data a SECRET input value is sealed with: replays and flow retries keep `originalId`, so they open it. */
export function inputAad(exec: { namespace: string; flowId: string; originalId: string }, inputId: string): string {
  return JSON.stringify([exec.namespace, exec.flowId, exec.originalId, inputId]);
}

/** The additional data of the values a task Pod's runner reports sealed to the operator (`SecretLayer.sealedValues`). */
export const reportedAad = (executionId: string): string => JSON.stringify(['reported', executionId]);
/** Additional data of the inputs of a Subflow request kept in a parent's run (`iteration`: a ForEachItem batch). */
export const requestAad = (parentId: string, taskRunId: string, iteration?: number): string =>
  JSON.stringify(['subflow-request', parentId, taskRunId, iteration ?? null]);

export const isSealed = (v: unknown): v is string => typeof v === 'string' && v.startsWith(SEALED_PREFIX);

export class SecretBox {
  constructor(private readonly key: Buffer) {
    if (key.length !== KEY_BYTES) throw new Error(`An encryption key is ${KEY_BYTES} bytes, got ${key.length}`);
  }

  seal(clear: string, aad: string): string {
    const iv = randomBytes(IV_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.key, iv);
    cipher.setAAD(Buffer.from(aad, 'utf8'));
    const body = Buffer.concat([cipher.update(clear, 'utf8'), cipher.final()]);
    return SEALED_PREFIX + Buffer.concat([iv, body, cipher.getAuthTag()]).toString('base64');
  }

  /**
   * A keyed hash (HMAC-SHA256, hex) of `value` under a subkey derived for `purpose`: what to store in place of a
   * credential that must only be recognised later (compare in constant time).
   */
  keyedHash(value: string, purpose: string): string {
    const sub = Buffer.from(hkdfSync('sha256', this.key, Buffer.alloc(0), `flowpilot keyed hash: ${purpose}`, 32));
    return createHmac('sha256', sub).update(value, 'utf8').digest('hex');
  }

  /** The clear value, or undefined when `sealed` was not sealed with this key for this `aad` (or is not sealed). */
  open(sealed: string, aad: string): string | undefined {
    if (!isSealed(sealed)) return undefined;
    const raw = Buffer.from(sealed.slice(SEALED_PREFIX.length), 'base64');
    if (raw.length < IV_BYTES + TAG_BYTES) return undefined;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, raw.subarray(0, IV_BYTES));
      decipher.setAAD(Buffer.from(aad, 'utf8'));
      decipher.setAuthTag(raw.subarray(raw.length - TAG_BYTES));
      return Buffer.concat([decipher.update(raw.subarray(IV_BYTES, raw.length - TAG_BYTES)), decipher.final()]).toString('utf8');
    } catch {
      return undefined;
    }
  }
}
