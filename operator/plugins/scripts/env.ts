// The environment of a script: an allow-list of the server's variables (what a shell, Python or a locale-aware tool
// needs), then what the script task adds (PYTHONPATH for the `kestra` module), the task's declared `env`, and
// WORKING_DIR / OUTPUT_DIR. Never the server's secrets: SECRET_*, FLOWPILOT_SECRET_*, ACCESS_TOKENS*, ENCRYPTION_KEY,
// storage and database credentials (STORAGE_S3_*, S3_*, AWS_*, LOG_STORE_URL), KUBECONFIG... are not inherited.

/** Variables a script inherits from the server, by name. */
export const INHERITED_ENV = [
  'PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'TERM', 'LANG', 'LANGUAGE', 'TZ', 'TMPDIR', 'TMP', 'TEMP',
  'SSL_CERT_FILE', 'SSL_CERT_DIR',
] as const;

/** Variables a script inherits from the server, by prefix (locale categories). */
export const INHERITED_ENV_PREFIXES = ['LC_'] as const;

const inherited = (name: string): boolean =>
  (INHERITED_ENV as readonly string[]).includes(name) || INHERITED_ENV_PREFIXES.some((p) => name.startsWith(p));

/** The allow-listed part of the server's environment. */
export function inheritedEnv(server: NodeJS.ProcessEnv): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(server)) if (value !== undefined && inherited(name)) out[name] = value;
  return out;
}

/** A script's whole environment: inherited, then the plugin's, then the task's own, then its directories. */
export function scriptEnv(a: {
  server: NodeJS.ProcessEnv; plugin?: Record<string, string>; task: Record<string, string>; workingDir: string; outputDir: string;
}): Record<string, string> {
  return { ...inheritedEnv(a.server), ...a.plugin, ...a.task, WORKING_DIR: a.workingDir, OUTPUT_DIR: a.outputDir };
}
