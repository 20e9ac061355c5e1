// Secrets from the environment (Kestra's convention): `SECRET_<NAME>` holds the base64 of the value (a plain value is
// accepted too). Task Pods also get the flow-secrets Secret verbatim as `FLOWPILOT_SECRET_<NAME>` (envFrom).

export const SECRET_ENV_PREFIX = 'SECRET_';
/** The setting holding the key that seals SECRET inputs (the base64 of 32 bytes). */
export const ENCRYPTION_KEY_ENV = 'ENCRYPTION_KEY';
/** Prefix of the flow secrets a task Pod receives from the flow-secrets Secret (envFrom), values verbatim. */
export const POD_SECRET_PREFIX = 'FLOWPILOT_SECRET_';

/** The value of `SECRET_<name>`, decoded when it is base64. */
export function secretFromEnv(env: NodeJS.ProcessEnv, name: string): string | undefined {
  return decodeEnvSecret(env[`${SECRET_ENV_PREFIX}${name}`]);
}

function decodeEnvSecret(raw: string | undefined): string | undefined {
  if (raw === undefined) return undefined;
  const decoded = Buffer.from(raw, 'base64');
  const looksBase64 = /^[A-Za-z0-9+/]+={0,2}$/.test(raw) && raw.length % 4 === 0 && decoded.toString('base64') === raw;
  return looksBase64 ? decoded.toString('utf8') : raw;
}

/** `secret('NAME')` in a task Pod: `FLOWPILOT_SECRET_<NAME>` (verbatim), else `SECRET_<NAME>`. */
export function podSecretLookup(env: NodeJS.ProcessEnv): (name: string) => string | undefined {
  return (name) => env[`${POD_SECRET_PREFIX}${name}`] ?? secretFromEnv(env, name);
}

/** Every secret value the environment holds: decoded `SECRET_*` and verbatim `FLOWPILOT_SECRET_*` (for the masker). */
export function envSecretValues(env: NodeJS.ProcessEnv): string[] {
  const out: string[] = [];
  for (const [name, raw] of Object.entries(env)) {
    if (raw === undefined) continue;
    if (name.startsWith(POD_SECRET_PREFIX)) out.push(raw);
    else if (name.startsWith(SECRET_ENV_PREFIX)) out.push(decodeEnvSecret(raw)!);
  }
  return out;
}
