// The README's "Security" section documents every safety limit with its default, and the settings it names exist:
// docs that match the code.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { LIMIT_SETTINGS } from '../operator/core/limits.js';

const README = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
const security = README.slice(README.indexOf('## Security'), README.indexOf('\n## ', README.indexOf('## Security') + 1));

describe('README Security section', () => {
  it('exists', () => expect(security.length).toBeGreaterThan(1000));

  it.each(Object.values(LIMIT_SETTINGS).map((s) => [s.env, s.default] as const))('documents %s with its default %s', (env, def) => {
    expect(security).toContain(`| \`${env}\` | ${def} |`);
  });

  it.each(['HOST', 'BASIC_AUTH_USERNAME', 'BASIC_AUTH_PASSWORD', 'API_TOKENS', 'API_TOKENS_FILE', 'ALLOWED_NAMESPACES', 'ENCRYPTION_KEY'])(
    'names the setting %s', (name) => expect(security).toContain(`\`${name}`));
});
