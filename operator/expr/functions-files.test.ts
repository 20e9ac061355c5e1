// Tables for fileSize / fileExists / isFileEmpty (over an injected stat service), fileURI, errorLogs without its
// service, and encrypt / decrypt (real AES-GCM: round trip, random IV, tampering, wrong key, Kestra's byte layout).
import { createCipheriv, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createRenderer, type RenderServices } from './index.js';

const sizes: Record<string, number> = { 'kestra:///company/team/f/executions/e/a.txt': 12, 'kestra:///company/team/f/executions/e/empty.txt': 0 };
const masked: string[] = [];
const services: RenderServices = {
  stat: (uri) => {
    if (uri.includes('victim')) throw new Error(`Reading '${uri}' is not allowed`);
    return sizes[uri];
  },
  onSecret: (v) => masked.push(v),
};
const r = createRenderer(services);
const vars = { flow: { id: 'f', namespace: 'company.team' } };
const A = 'kestra:///company/team/f/executions/e/a.txt';
const EMPTY = 'kestra:///company/team/f/executions/e/empty.txt';
const NONE = 'kestra:///company/team/f/executions/e/none.txt';

describe('file functions', () => {
  it.each([
    [`{{ fileSize('${A}') }}`, '12'],
    [`{{ fileExists('${A}') }}`, 'true'],
    [`{{ fileExists('${NONE}') }}`, 'false'],
    [`{{ isFileEmpty('${EMPTY}') }}`, 'true'],
    [`{{ isFileEmpty(path='${A}') }}`, 'false'],
    ["{{ fileURI('scripts/run.py') }}", 'kestra:///company/team/_files/scripts/run.py'],
  ])('%s → %s', (template, expected) => expect(r.render(template, vars)).toBe(expected));

  it('fileSize / isFileEmpty of a missing file fail naming it; refusals of the service come through', () => {
    expect(() => r.render(`{{ fileSize('${NONE}') }}`, vars)).toThrow(/fileSize: file '.*none.txt' not found/);
    expect(() => r.render(`{{ isFileEmpty('${NONE}') }}`, vars)).toThrow(/not found/);
    expect(() => r.render("{{ fileExists('kestra:///victim/ns/f/executions/v/x') }}", vars)).toThrow(/is not allowed/);
  });

  it('are unavailable where no service is given (errorLogs outside runnable tasks)', () => {
    const bare = createRenderer({});
    expect(() => bare.render(`{{ fileExists('${A}') }}`, vars)).toThrow(/fileExists\(\) is not available here/);
    expect(() => bare.render('{{ errorLogs() }}', vars)).toThrow(/only be used in runnable tasks/);
  });
});

describe('encrypt / decrypt', () => {
  const key = randomBytes(32).toString('base64');
  const other = randomBytes(32).toString('base64');

  it('round-trips, with a fresh IV each time, and masks the key and the plaintext', () => {
    const a = r.render(`{{ encrypt('${key}', 'my value') }}`, vars);
    const b = r.render(`{{ encrypt('${key}', 'my value') }}`, vars);
    expect(a).not.toBe(b);
    expect(Buffer.from(a, 'base64').length).toBe(12 + 8 + 16);
    expect(r.render(`{{ decrypt('${key}', '${a}') }}`, vars)).toBe('my value');
    expect(masked).toContain(key);
    expect(masked).toContain('my value');
  });

  it('reads what Kestra writes: base64 of IV (12 bytes), ciphertext, 128-bit tag', () => {
    const k = randomBytes(16);
    const iv = randomBytes(12);
    const c = createCipheriv('aes-128-gcm', k, iv);
    const value = Buffer.concat([iv, c.update('hello kestra', 'utf8'), c.final(), c.getAuthTag()]).toString('base64');
    expect(r.render(`{{ decrypt('${k.toString('base64')}', '${value}') }}`, vars)).toBe('hello kestra');
  });

  it('refuses a wrong key, an altered value and a malformed key, never quoting the key', () => {
    const value = r.render(`{{ encrypt('${key}', 'x') }}`, vars);
    expect(() => r.render(`{{ decrypt('${other}', '${value}') }}`, vars)).toThrow(/wrong key, or the value was altered/);
    const bytes = Buffer.from(value, 'base64');
    bytes[14]! ^= 1;
    expect(() => r.render(`{{ decrypt('${key}', '${bytes.toString('base64')}') }}`, vars)).toThrow(/altered/);
    let message = '';
    try { r.render("{{ encrypt('c2hvcnQta2V5', 'x') }}", vars); } catch (e) { message = (e as Error).message; }
    expect(message).toMatch(/base64 of 16, 24 or 32 bytes/);
    expect(message.replace(/\{\{.*\}\}/s, '')).not.toContain('c2hvcnQta2V5');
  });
});
