// A script's environment: only the allow-listed server variables, then the plugin's, the task's `env` and the
// directories; a real shell proves the server's secrets and credentials are not inherited.
import { afterEach, describe, expect, it } from 'vitest';
import { makeTestContext, type TestContext } from '../testing.js';
import { inheritedEnv, scriptEnv } from './env.js';
import { pythonCommandsPlugin } from './python.js';
import { shellCommandsPlugin } from './shell.js';

describe('inheritedEnv', () => {
  it.each([
    ['PATH', true], ['HOME', true], ['LANG', true], ['LC_ALL', true], ['LC_CTYPE', true], ['TZ', true], ['TMPDIR', true],
    ['SECRET_MYSECRET', false], ['FLOWPILOT_SECRET_TOKEN', false], ['ACCESS_TOKENS', false], ['ACCESS_TOKENS_FILE', false],
    ['ENCRYPTION_KEY', false], ['STORAGE_S3_SECRET_ACCESS_KEY', false], ['S3_SECRET_ACCESS_KEY', false],
    ['AWS_SECRET_ACCESS_KEY', false], ['LOG_STORE_URL', false], ['KUBECONFIG', false], ['PYTHONPATH', false],
    ['NODE_OPTIONS', false], ['DATA_DIR', false],
  ])('%s inherited: %s', (name, kept) => {
    expect(Object.hasOwn(inheritedEnv({ [name]: 'v' }), name)).toBe(kept);
  });

  it('the task env and the directories win over inherited and plugin values', () => {
    expect(scriptEnv({ server: { PATH: '/bin', HOME: '/h' }, plugin: { PATH: '/py:/bin' }, task: { HOME: '/mine' }, workingDir: '/w', outputDir: '/o' }))
      .toEqual({ PATH: '/py:/bin', HOME: '/mine', WORKING_DIR: '/w', OUTPUT_DIR: '/o' });
  });
});

describe('a script run', () => {
  let t: TestContext | undefined;
  const saved = { ...process.env };
  afterEach(async () => {
    await t?.cleanup();
    t = undefined;
    for (const k of ['SECRET_MYSECRET', 'ACCESS_TOKENS', 'ENCRYPTION_KEY', 'STORAGE_S3_SECRET_ACCESS_KEY']) {
      if (saved[k] === undefined) delete process.env[k]; else process.env[k] = saved[k];
    }
  });

  it.each([
    ['shell', shellCommandsPlugin],
    ['python', pythonCommandsPlugin],
  ])('%s: sees the task env and its directories, not the server secrets', async (_kind, plugin) => {
    Object.assign(process.env, { SECRET_MYSECRET: 'c2VydmVy', ACCESS_TOKENS: 'tok', ENCRYPTION_KEY: 'k', STORAGE_S3_SECRET_ACCESS_KEY: 's3' });
    t = makeTestContext({ task: { id: 's', type: plugin.type, env: { MINE: 'declared' }, commands: ['echo "$(env | cut -d= -f1 | sort | tr "\\n" " ")"', 'echo "mine=$MINE"'] } });
    const r = await plugin.run(t.ctx);
    expect(r.state).toBe('SUCCESS');
    const [names, mine] = t.messages('INFO');
    const vars = names!.trim().split(' ');
    expect(vars).toEqual(expect.arrayContaining(['PATH', 'WORKING_DIR', 'OUTPUT_DIR', 'MINE']));
    for (const leaked of ['SECRET_MYSECRET', 'ACCESS_TOKENS', 'ENCRYPTION_KEY', 'STORAGE_S3_SECRET_ACCESS_KEY']) expect(vars).not.toContain(leaked);
    expect(mine).toBe('mine=declared');
  });
});
