// TLS of the PostgreSQL triggers (the query trigger and the row-change trigger): libpq/JDBC `sslMode` values mapped
// to node-postgres' `ssl` option, with the certificates given as PEM content (`sslRootCert`, `sslCert`, `sslKey`,
// `sslKeyPassword`, as Kestra's plugins take them; e.g. "{{ secret('PG_CA') }}", never a file path).
// - DISABLE: no TLS. ALLOW: plain first, TLS (unverified) if the server refuses plain connections.
// - PREFER: TLS without verification, plain if the server does not support TLS. Neither protects against an active
//   attacker (as in libpq/pgjdbc); use REQUIRE or stronger for that.
// - REQUIRE: TLS, certificate not verified. VERIFY_CA: the chain is verified against `sslRootCert` (the system CAs
//   without it), the host name is not. VERIFY_FULL: the chain and the host name (or IP address) are verified.
// `sslCert`/`sslKey` (and `sslKeyPassword`) give a client certificate for every TLS mode.
import type tls from 'node:tls';
import type pg from 'pg';
import type { TriggerContext } from '../types.js';
import { str } from './util.js';

export type SslMode = 'DISABLE' | 'ALLOW' | 'PREFER' | 'REQUIRE' | 'VERIFY_CA' | 'VERIFY_FULL';
const SSL_MODES: readonly SslMode[] = ['DISABLE', 'ALLOW', 'PREFER', 'REQUIRE', 'VERIFY_CA', 'VERIFY_FULL'];

/** Client certificate and trusted CA (PEM contents). */
export interface SslMaterial { rootCert?: string; cert?: string; key?: string; keyPassword?: string }

export function sslModeOf(value: string, field: string): SslMode {
  const mode = value.trim().toUpperCase().replace(/-/g, '_') as SslMode;
  if (!SSL_MODES.includes(mode)) throw new Error(`${field} must be one of ${SSL_MODES.join(', ')} (got '${value}')`);
  return mode;
}

/** node-postgres' `ssl` for a mode; ALLOW and PREFER also give the setting to retry with when the first is refused. */
export function pgSsl(mode: SslMode, m: SslMaterial = {}): { ssl: pg.ClientConfig['ssl']; fallback?: pg.ClientConfig['ssl'] } {
  const client: tls.ConnectionOptions = {};
  if (m.cert) client.cert = m.cert;
  if (m.key) client.key = m.key;
  if (m.keyPassword) client.passphrase = m.keyPassword;
  const unverified: tls.ConnectionOptions = { ...client, rejectUnauthorized: false };
  const verified: tls.ConnectionOptions = { ...client, rejectUnauthorized: true, ...(m.rootCert ? { ca: m.rootCert } : {}) };
  switch (mode) {
    case 'DISABLE': return { ssl: false };
    case 'ALLOW': return { ssl: false, fallback: unverified };
    case 'PREFER': return { ssl: unverified, fallback: false };
    case 'REQUIRE': return { ssl: unverified };
    case 'VERIFY_CA': return { ssl: { ...verified, checkServerIdentity: () => undefined } };
    case 'VERIFY_FULL': return { ssl: verified };
  }
}

/** The trigger's PEM material, checked: PEM content (not a path), and a client certificate always with its key. */
export function sslMaterial(ctx: TriggerContext): SslMaterial {
  const t = ctx.trigger;
  const rootCert = str(ctx, t.sslRootCert, 'sslRootCert', false);
  const cert = str(ctx, t.sslCert, 'sslCert', false);
  const key = str(ctx, t.sslKey, 'sslKey', false);
  const keyPassword = str(ctx, t.sslKeyPassword, 'sslKeyPassword', false);
  for (const [name, pem] of [['sslRootCert', rootCert], ['sslCert', cert], ['sslKey', key]] as const) {
    if (pem !== undefined && !pem.includes('-----BEGIN ')) throw new Error(`triggers.${t.id}.${name} must be PEM content ("-----BEGIN ..."), e.g. "{{ secret('PG_CA') }}"; file paths are not read`);
  }
  if ((cert === undefined) !== (key === undefined)) throw new Error(`triggers.${t.id}.${cert === undefined ? 'sslCert' : 'sslKey'} is required with ${cert === undefined ? 'sslKey' : 'sslCert'}`);
  const out: SslMaterial = {};
  if (rootCert) out.rootCert = rootCert;
  if (cert) out.cert = cert;
  if (key) out.key = key;
  if (keyPassword) out.keyPassword = keyPassword;
  return out;
}
