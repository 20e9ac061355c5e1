// JDBC URLs as Kestra users write them (`jdbc:postgresql://host:5432/db?sslmode=require`, `jdbc:mysql://host/db`,
// `jdbc:mariadb://...`), parsed into what the Node drivers take. One host only (no failover lists); parameters are
// returned for the driver module to apply, which refuses or reports the ones it does not know. Pure.

export type JdbcKind = 'postgresql' | 'mysql';

export interface JdbcUrl {
  kind: JdbcKind;
  host: string;
  port: number;
  database: string | undefined;
  /** Query parameters, names as written (read them with `param`, case-insensitively). */
  params: Record<string, string>;
}

const SCHEMES: Record<string, JdbcKind> = { postgresql: 'postgresql', mysql: 'mysql', mariadb: 'mysql' };
const DEFAULT_PORT: Record<JdbcKind, number> = { postgresql: 5432, mysql: 3306 };

/** Parses `url` for a task of `kind`; errors name the property and never echo the URL's password. */
export function parseJdbcUrl(url: string, kind: JdbcKind): JdbcUrl {
  const m = /^jdbc:([a-z]+):\/\/([^/?#]*)(?:\/([^?#]*))?(?:\?([^#]*))?$/i.exec(url.trim());
  const scheme = m ? SCHEMES[m[1].toLowerCase()] : undefined;
  if (!m || !scheme) throw new Error(`Property 'url' must be a JDBC URL like jdbc:${kind}://host:port/database`);
  if (scheme !== kind) throw new Error(`Property 'url' is a jdbc:${m[1]} URL; this task connects to ${kind === 'mysql' ? 'MySQL/MariaDB' : 'PostgreSQL'} (jdbc:${kind}://...)`);
  let authority = m[2];
  const params: Record<string, string> = Object.create(null);
  const at = authority.lastIndexOf('@');
  if (at >= 0) {
    // user:password@host (MySQL's Connector/J accepts it): read as the user and password parameters.
    const [user, ...pw] = authority.slice(0, at).split(':');
    if (user) params.user = decodeURIComponent(user);
    if (pw.length) params.password = decodeURIComponent(pw.join(':'));
    authority = authority.slice(at + 1);
  }
  if (authority.includes(',')) throw new Error("Property 'url' lists several hosts: one host only is supported");
  let host = authority;
  let port = DEFAULT_PORT[kind];
  const v6 = /^\[([^\]]+)\](?::(\d+))?$/.exec(authority);
  const plain = /^([^:]*)(?::(\d*))?$/.exec(authority);
  if (v6) {
    host = v6[1];
    if (v6[2]) port = Number(v6[2]);
  } else if (plain) {
    host = plain[1];
    if (plain[2]) port = Number(plain[2]);
  } else {
    throw new Error(`Property 'url' has a malformed host:port '${authority}'`);
  }
  if (!host) host = 'localhost';
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`Property 'url' has an invalid port '${port}'`);
  for (const pair of (m[4] ?? '').split('&')) {
    if (!pair) continue;
    const eq = pair.indexOf('=');
    const name = decodeURIComponent(eq < 0 ? pair : pair.slice(0, eq));
    params[name] = decodeURIComponent(eq < 0 ? '' : pair.slice(eq + 1).replace(/\+/g, ' '));
  }
  const database = m[3] ? decodeURIComponent(m[3]) : undefined;
  return { kind, host, port, database: database || undefined, params };
}

/** The parameters of `url` no entry of `known` names (compared case-insensitively), for a warning or an error. */
export function unknownParams(url: JdbcUrl, known: readonly string[]): string[] {
  const k = new Set(known.map((x) => x.toLowerCase()));
  return Object.keys(url.params).filter((p) => !k.has(p.toLowerCase()));
}

/** A URL parameter read case-insensitively (JDBC drivers differ; users write `sslmode` and `sslMode`). */
export function param(url: JdbcUrl, name: string): string | undefined {
  const lower = name.toLowerCase();
  for (const [k, v] of Object.entries(url.params)) if (k.toLowerCase() === lower) return v;
  return undefined;
}
