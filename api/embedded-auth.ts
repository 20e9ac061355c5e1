// Who may call the embedded API: HTTP basic auth (Kestra's server basic auth: one username and password) and/or bearer
// tokens, checked by SHA-256 hash in constant time and never logged; and the rule that a server listening beyond this
// machine (HOST not a loopback address) must have one of them. Webhooks, /healthz and the inference routes keep their
// own rules (see api/access.ts, shared with cluster mode).
import { readFileSync } from 'node:fs';
import type { Context, Middleware, Next } from 'koa';
import { bearerToken, hashToken, tokenMatches } from '../operator/inference/auth.js';
import { tokenHashesFrom } from '../operator/inference/config.js';
import { accessFor } from './access.js';

export interface EmbeddedAuth {
  /** SHA-256 hashes of the basic-auth username and password. */
  basic?: { usernameHash: string; passwordHash: string };
  /** SHA-256 hashes of the accepted bearer tokens. */
  tokenHashes: string[];
}

/** The settings that configure authentication, as named in errors. */
export const AUTH_SETTINGS = 'BASIC_AUTH_USERNAME and BASIC_AUTH_PASSWORD, or API_TOKENS (or API_TOKENS_FILE)';

const SHA256_HEX = /^[0-9a-f]{64}$/;

/** Bearer token hashes from API_TOKENS (comma- or line-separated) and API_TOKENS_FILE (one a line); `sha256:<hex>` entries are hashes. */
function apiTokenHashes(env: NodeJS.ProcessEnv): string[] {
  const fromFile = (path: string): string => {
    try { return readFileSync(path, 'utf8'); } catch (err) {
      throw new Error(`API_TOKENS_FILE '${path}' cannot be read: ${(err as NodeJS.ErrnoException).code ?? 'error'}`);
    }
  };
  const sources: [string, string | undefined][] = [
    ['API_TOKENS', env.API_TOKENS], ['API_TOKENS_FILE', env.API_TOKENS_FILE ? fromFile(env.API_TOKENS_FILE) : undefined],
  ];
  return sources.flatMap(([name, text]) => {
    const hashes = tokenHashesFrom(text);
    if (hashes.some((h) => !SHA256_HEX.test(h))) throw new Error(`${name} holds a 'sha256:' entry that is not 64 hexadecimal digits`);
    return hashes;
  });
}

/** The authentication the environment configures, or undefined when none is; half or malformed settings throw. */
export function embeddedAuthFromEnv(env: NodeJS.ProcessEnv): EmbeddedAuth | undefined {
  const username = env.BASIC_AUTH_USERNAME ?? '';
  const password = env.BASIC_AUTH_PASSWORD ?? '';
  if ((username === '') !== (password === '')) throw new Error('BASIC_AUTH_USERNAME and BASIC_AUTH_PASSWORD must be set together');
  if (username.includes(':')) throw new Error("BASIC_AUTH_USERNAME must not contain ':' (basic auth separates the username from the password with it)");
  const tokenHashes = apiTokenHashes(env);
  if (username === '' && tokenHashes.length === 0) return undefined;
  const auth: EmbeddedAuth = { tokenHashes };
  if (username !== '') auth.basic = { usernameHash: hashToken(username), passwordHash: hashToken(password) };
  return auth;
}

/** Username and password of an `Authorization: Basic <base64>` header. */
function basicCredentials(header: string): { username: string; password: string } | undefined {
  const m = /^Basic[ \t]+([A-Za-z0-9+/=_-]+)[ \t]*$/i.exec(header);
  if (!m) return undefined;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon < 0 ? undefined : { username: decoded.slice(0, colon), password: decoded.slice(colon + 1) };
}

/** Whether an Authorization header carries valid credentials; every comparison is of hashes, in constant time. */
export function credentialsValid(auth: EmbeddedAuth, header: string | undefined): boolean {
  if (!header) return false;
  const basic = auth.basic && basicCredentials(header);
  if (auth.basic && basic) {
    // Both halves are always compared, so the time does not tell a right username from a wrong one.
    const user = tokenMatches(basic.username, [auth.basic.usernameHash]);
    const pass = tokenMatches(basic.password, [auth.basic.passwordHash]);
    return user && pass;
  }
  const token = bearerToken(header);
  return token !== undefined && auth.tokenHashes.length > 0 && tokenMatches(token, auth.tokenHashes);
}

/**
 * Koa middleware: 401 with the accepted schemes for every non-public route (api/access.ts) without valid credentials.
 * A script's request (`X-Requested-With: XMLHttpRequest`, as the web UI sends) gets no Basic challenge, so the browser
 * shows the UI's own sign-in form instead of its native password prompt (Spring Security's convention).
 */
export function embeddedAuthMiddleware(auth: EmbeddedAuth): Middleware {
  const basicChallenge = auth.basic ? ['Basic realm="flowpilot", charset="UTF-8"'] : [];
  const bearerChallenge = auth.tokenHashes.length > 0 ? ['Bearer realm="flowpilot"'] : [];
  const schemes = [auth.basic ? 'basic auth' : '', auth.tokenHashes.length > 0 ? 'a bearer token' : ''].filter(Boolean).join(' or ');
  return async function embeddedAuthenticate(ctx: Context, next: Next): Promise<void> {
    if (accessFor(ctx.method, ctx.path).kind === 'public') return next();
    if (credentialsValid(auth, ctx.get('authorization'))) return next();
    ctx.status = 401;
    const fromScript = ctx.get('x-requested-with').toLowerCase() === 'xmlhttprequest';
    const challenges = fromScript ? bearerChallenge : [...basicChallenge, ...bearerChallenge];
    if (challenges.length > 0) ctx.set('WWW-Authenticate', challenges);
    ctx.body = { message: `Unauthorized: valid credentials are required (${schemes})` };
  };
}

/** Loopback addresses and `localhost`: a server bound there is reachable from this machine only. */
export function isLoopbackHost(host: string): boolean {
  const h = host.trim().toLowerCase().replace(/^\[(.*)\]$/, '$1');
  return h === 'localhost' || h === '::1' || /^127(\.\d{1,3}){3}$/.test(h) || /^::ffff:127(\.\d{1,3}){3}$/.test(h);
}

export interface EmbeddedAccess {
  /** Where to listen (HOST, default 127.0.0.1). */
  host: string;
  /** Middleware to run ahead of the routes (authentication when configured). */
  before: Middleware[];
  /** For the start-up line: which schemes are on (never a credential). */
  summary: string;
}

/** HOST and authentication of the embedded server; refuses (throws) a non-loopback HOST without authentication. */
export function embeddedAccess(env: NodeJS.ProcessEnv): EmbeddedAccess {
  const host = (env.HOST?.trim() || '127.0.0.1').replace(/^\[(.*)\]$/, '$1');
  const auth = embeddedAuthFromEnv(env);
  if (!auth) {
    if (!isLoopbackHost(host)) {
      throw new Error(`HOST=${host} makes the API reachable from other machines, but no authentication is configured: ` +
        `set ${AUTH_SETTINGS}, or leave HOST unset to listen on 127.0.0.1 only`);
    }
    return { host, before: [], summary: 'authentication off (loopback only)' };
  }
  const on = [auth.basic ? 'basic' : '', auth.tokenHashes.length > 0 ? `bearer (${auth.tokenHashes.length} token(s))` : ''].filter(Boolean);
  return { host, before: [embeddedAuthMiddleware(auth)], summary: `authentication: ${on.join(', ')}` };
}
