// PostgreSQL's TLS modes as Kestra's `sslMode` property names them (libpq's sslmode values), shared by the task
// declaration (postgresql.ts) and the session (postgres-session.ts) without loading the driver at declaration time.
export const SSL_MODES = ['DISABLE', 'ALLOW', 'PREFER', 'REQUIRE', 'VERIFY_CA', 'VERIFY_FULL'] as const;
export type SslMode = typeof SSL_MODES[number];
