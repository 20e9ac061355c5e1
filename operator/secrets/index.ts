// The secret layer of each home, composed once: the secret values of the source, the key that seals SECRET inputs, and
// the masking stores over them (see README.md in this folder).
import { envSecretValues } from './env.js';
import { boxFromEnv, embeddedBox } from './key.js';
import { SecretLayer } from './layer.js';

export { maskedStores, maskExecution, maskOutcome, executionKV, type MaskedStores } from './masked-stores.js';
export { createMasker, MASK, MIN_SECRET_LENGTH, NO_SECRETS, type Masker } from './masker.js';
export { SecretLayer } from './layer.js';
export { envSecretValues, podSecretLookup, secretFromEnv } from './env.js';
export { boxFromEnv, embeddedBox, ENCRYPTION_KEY_ENV, KEY_FILE } from './key.js';

/** Embedded mode: every `SECRET_<NAME>` of the environment; ENCRYPTION_KEY or `<dataDir>/encryption.key`. */
export function embeddedSecrets(env: NodeJS.ProcessEnv, dataDir: string): SecretLayer {
  return new SecretLayer({ values: () => envSecretValues(env), box: embeddedBox(env, dataDir) });
}

/** A process given its secrets by environment (the cluster API, a task Pod's runner); ENCRYPTION_KEY when set. */
export function envSecrets(env: NodeJS.ProcessEnv): SecretLayer {
  const box = boxFromEnv(env);
  return new SecretLayer({ values: () => envSecretValues(env), ...(box ? { box } : {}) });
}
