// scripts/install-services.sh against a temporary policy-rc.d path and a stand-in apt-get (named so: nothing is
// installed): its own policy-rc.d is in place while apt-get installs, and afterwards what was there before is back
// (content and mode), also when apt-get fails or the run is interrupted.
import { spawn } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { until } from './support/wait.js';

const SCRIPT = resolve(new URL('..', import.meta.url).pathname, 'scripts/install-services.sh');
const OURS = '#!/bin/sh\nexit 101\n';
const PREVIOUS = '#!/bin/sh\n# the site policy\nexit 0\n';

let dir: string;
afterEach(() => rmSync(dir, { recursive: true, force: true }));

/** A temp dir with `sbin/` (the policy-rc.d's folder) and `bin/` holding the stand-ins for apt-get and id (root). */
function setup(): { policy: string; log: string; bin: string } {
  dir = mkdtempSync(join(tmpdir(), 'install-services-'));
  const bin = join(dir, 'bin');
  const log = join(dir, 'apt.log');
  for (const d of [bin, join(dir, 'sbin')]) mkdirSync(d);
  const policy = join(dir, 'sbin', 'policy-rc.d');
  writeFileSync(join(bin, 'id'), '#!/bin/sh\necho 0\n');
  writeFileSync(join(bin, 'apt-get'), `#!/bin/sh
echo "apt-get $*" >> "${log}"
if [ "$1" = install ]; then
  { echo "policy during install:"; cat "${policy}"; } >> "${log}"
  [ -n "$STANDIN_APT_SLEEP" ] && sleep "$STANDIN_APT_SLEEP"
  exit "\${STANDIN_APT_STATUS:-0}"
fi
`);
  for (const f of ['id', 'apt-get']) chmodSync(join(bin, f), 0o755);
  return { policy, log, bin };
}

function run(env: { policy: string; bin: string }, extra: NodeJS.ProcessEnv = {}) {
  const child = spawn('bash', [SCRIPT], {
    env: { PATH: `${env.bin}:${process.env.PATH}`, POLICY_RC_D: env.policy, SERVICE_PACKAGES: 'flowpilot-test-missing-package', ...extra },
    stdio: ['ignore', 'pipe', 'pipe'], detached: true,
  });
  let out = '';
  child.stdout.on('data', (d) => { out += d; });
  child.stderr.on('data', (d) => { out += d; });
  const done = new Promise<{ code: number | null; out: string }>((res) => child.once('exit', (code) => res({ code, out })));
  return { child, done };
}

const leftovers = (policy: string): string[] => readdirSync(join(policy, '..')).filter((f) => f !== 'policy-rc.d');

describe('install-services.sh and policy-rc.d', () => {
  it('puts its policy-rc.d in place for apt-get install and removes it when there was none', async () => {
    const env = setup();
    const { code, out } = await run(env).done;
    expect(code, out).toBe(0);
    const log = readFileSync(env.log, 'utf8');
    expect(log).toContain('apt-get install -y -qq --no-install-recommends flowpilot-test-missing-package');
    expect(log).toContain(`policy during install:\n${OURS}`);
    expect(existsSync(env.policy)).toBe(false);
    expect(leftovers(env.policy)).toEqual([]);
  });

  it.each([
    ['apt-get succeeds', {}, 0],
    ['apt-get fails', { STANDIN_APT_STATUS: '100' }, 100],
  ])('restores the policy-rc.d that was there (content and mode) when %s', async (_what, extra, status) => {
    const env = setup();
    writeFileSync(env.policy, PREVIOUS);
    chmodSync(env.policy, 0o750);
    const { code, out } = await run(env, extra).done;
    expect(code, out).toBe(status);
    expect(readFileSync(env.log, 'utf8')).toContain(`policy during install:\n${OURS}`);
    expect(readFileSync(env.policy, 'utf8')).toBe(PREVIOUS);
    expect(lstatSync(env.policy).mode & 0o777).toBe(0o750);
    expect(leftovers(env.policy)).toEqual([]);
  });

  it('restores a previous policy-rc.d symlink as a symlink', async () => {
    const env = setup();
    const target = join(dir, 'site-policy');
    writeFileSync(target, PREVIOUS);
    symlinkSync(target, env.policy);
    expect((await run(env).done).code).toBe(0);
    expect(readlinkSync(env.policy)).toBe(target);
    expect(readFileSync(target, 'utf8')).toBe(PREVIOUS);
  });

  it('restores it when interrupted (Ctrl-C) while apt-get installs', async () => {
    const env = setup();
    writeFileSync(env.policy, PREVIOUS);
    const { child, done } = run(env, { STANDIN_APT_SLEEP: '30' });
    await until(() => existsSync(env.log) && readFileSync(env.log, 'utf8').includes('policy during install'), 'apt-get install to start', 20_000);
    process.kill(-child.pid!, 'SIGINT'); // the whole process group, as a terminal's Ctrl-C
    const { code } = await done;
    expect(code).not.toBe(0);
    expect(readFileSync(env.policy, 'utf8')).toBe(PREVIOUS);
    expect(leftovers(env.policy)).toEqual([]);
  });

  it('leaves policy-rc.d alone when nothing is missing', async () => {
    const env = setup();
    writeFileSync(env.policy, PREVIOUS);
    const { code } = await run(env, { SERVICE_PACKAGES: '' }).done;
    expect(code).toBe(0);
    expect(existsSync(env.log)).toBe(false);
    expect(readFileSync(env.policy, 'utf8')).toBe(PREVIOUS);
  });
});
