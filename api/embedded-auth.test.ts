// Embedded API authentication, unit level: settings (and their refusals), the constant-time credential check, loopback
// hosts and the refusal to listen beyond this machine without authentication.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { hashToken } from '../operator/inference/auth.js';
import { credentialsValid, embeddedAccess, embeddedAuthFromEnv, isLoopbackHost, type EmbeddedAuth } from './embedded-auth.js';

const basic = (user: string, pass: string): string => `Basic ${Buffer.from(`${user}:${pass}`).toString('base64')}`;

let dir: string | undefined;
afterEach(() => { if (dir) rmSync(dir, { recursive: true, force: true }); dir = undefined; });

describe('embeddedAuthFromEnv', () => {
  it('is undefined when nothing is configured (empty values count as unset)', () => {
    expect(embeddedAuthFromEnv({})).toBeUndefined();
    expect(embeddedAuthFromEnv({ BASIC_AUTH_USERNAME: '', BASIC_AUTH_PASSWORD: '', API_TOKENS: ' , ' })).toBeUndefined();
  });

  it('keeps only hashes of the basic credentials and of the tokens (API_TOKENS and API_TOKENS_FILE, sha256: entries)', () => {
    dir = mkdtempSync(join(tmpdir(), 'auth-'));
    const file = join(dir, 'tokens');
    writeFileSync(file, `# operators\nfile-token\nsha256:${hashToken('hashed-token').toUpperCase()}\n`);
    const auth = embeddedAuthFromEnv({ BASIC_AUTH_USERNAME: 'admin', BASIC_AUTH_PASSWORD: 's3cret', API_TOKENS: 'one,two', API_TOKENS_FILE: file })!;
    expect(auth.basic).toEqual({ usernameHash: hashToken('admin'), passwordHash: hashToken('s3cret') });
    expect(auth.tokenHashes).toEqual(['one', 'two', 'file-token', 'hashed-token'].map(hashToken));
    expect(JSON.stringify(auth)).not.toMatch(/s3cret|admin|file-token/);
  });

  it.each([
    [{ BASIC_AUTH_USERNAME: 'admin' }, /BASIC_AUTH_USERNAME and BASIC_AUTH_PASSWORD must be set together/],
    [{ BASIC_AUTH_PASSWORD: 'secret-password' }, /BASIC_AUTH_USERNAME and BASIC_AUTH_PASSWORD must be set together/],
    [{ BASIC_AUTH_USERNAME: 'a:b', BASIC_AUTH_PASSWORD: 'secret-password' }, /BASIC_AUTH_USERNAME must not contain ':'/],
    [{ API_TOKENS: 'sha256:secret-not-hex' }, /API_TOKENS holds a 'sha256:' entry that is not 64 hexadecimal digits/],
    [{ API_TOKENS_FILE: '/nonexistent/tokens' }, /API_TOKENS_FILE '\/nonexistent\/tokens' cannot be read: ENOENT/],
  ])('refuses %j, naming the setting and no secret', (env, message) => {
    expect(() => embeddedAuthFromEnv(env)).toThrow(message);
    try { embeddedAuthFromEnv(env); } catch (err) { expect((err as Error).message).not.toMatch(/secret/); }
  });
});

describe('credentialsValid', () => {
  const both: EmbeddedAuth = { basic: { usernameHash: hashToken('admin'), passwordHash: hashToken('pa:ss word') }, tokenHashes: [hashToken('tok-1'), hashToken('tok-2')] };
  const basicOnly: EmbeddedAuth = { basic: both.basic!, tokenHashes: [] };
  const tokensOnly: EmbeddedAuth = { tokenHashes: both.tokenHashes };

  it.each([
    ['right basic credentials (password with a colon and a space)', both, basic('admin', 'pa:ss word'), true],
    ['the scheme in lower case', both, basic('admin', 'pa:ss word').replace('Basic', 'basic'), true],
    ['a wrong password', both, basic('admin', 'pa:ss wore'), false],
    ['a wrong username', both, basic('Admin', 'pa:ss word'), false],
    ['a password prefix', both, basic('admin', 'pa:ss'), false],
    ['no colon', both, `Basic ${Buffer.from('adminpa:ss word'.replace(':', '')).toString('base64')}`, false],
    ['an empty basic header', both, 'Basic ', false],
    ['a right bearer token', both, 'Bearer tok-2', true],
    ['a wrong bearer token', both, 'Bearer tok-3', false],
    ['a bearer token when only basic auth is on', basicOnly, 'Bearer tok-1', false],
    ['basic credentials when only tokens are on', tokensOnly, basic('admin', 'pa:ss word'), false],
    ['the token as a basic password', tokensOnly, basic('x', 'tok-1'), false],
    ['another scheme', both, 'Digest tok-1', false],
    ['no header', both, undefined, false],
  ])('%s', (_what, auth, header, ok) => {
    expect(credentialsValid(auth, header)).toBe(ok);
  });
});

describe('isLoopbackHost', () => {
  it.each([
    ['127.0.0.1', true], ['127.1.2.3', true], ['localhost', true], ['LOCALHOST', true], ['::1', true], ['[::1]', true],
    ['::ffff:127.0.0.1', true], ['0.0.0.0', false], ['::', false], ['192.168.1.10', false], ['example.com', false],
    ['127.0.0.1.example.com', false], ['localhost.example.com', false],
  ])('%s → %s', (host, loopback) => {
    expect(isLoopbackHost(host)).toBe(loopback);
  });
});

describe('embeddedAccess', () => {
  it('listens on 127.0.0.1 without authentication by default', () => {
    const a = embeddedAccess({});
    expect(a).toMatchObject({ host: '127.0.0.1', before: [] });
    expect(embeddedAccess({ HOST: '' }).host).toBe('127.0.0.1');
  });

  it('refuses a non-loopback HOST without authentication, naming the settings', () => {
    expect(() => embeddedAccess({ HOST: '0.0.0.0' })).toThrow(
      'HOST=0.0.0.0 makes the API reachable from other machines, but no authentication is configured: set ' +
      'BASIC_AUTH_USERNAME and BASIC_AUTH_PASSWORD, or API_TOKENS (or API_TOKENS_FILE), or leave HOST unset to listen on 127.0.0.1 only');
  });

  it('accepts any HOST once authentication is configured, and names the schemes, never the credentials', () => {
    const a = embeddedAccess({ HOST: '0.0.0.0', BASIC_AUTH_USERNAME: 'admin', BASIC_AUTH_PASSWORD: 'hunter2', API_TOKENS: 'tok-1' });
    expect(a.host).toBe('0.0.0.0');
    expect(a.before).toHaveLength(1);
    expect(a.summary).toBe('authentication: basic, bearer (1 token(s))');
    expect(embeddedAccess({ HOST: '[::1]', API_TOKENS: 'tok-1' }).host).toBe('::1');
  });
});
