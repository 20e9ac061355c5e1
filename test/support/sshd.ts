// Test support: Debian's OpenSSH server (sshd, with its internal SFTP server) started as the current user on a free
// loopback port, with its own sshd_config, host key and authorized keys (one plain key, one with a passphrase), in a
// temporary directory. Only key logins: a password login would need a password for the current account.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { userInfo, tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, run, type Service } from './services.js';

const SSHD = '/usr/sbin/sshd';

export interface Sshd extends Service {
  user: string;
  /** Private key (OpenSSH format) authorized on the server. */
  key: string;
  /** Private key protected by `passphrase`, authorized too. */
  protectedKey: string;
  passphrase: string;
  /** A folder of the server's disk the tests may use. */
  dir: string;
}

function keygen(dir: string, name: string, passphrase = ''): string {
  const file = join(dir, name);
  execFileSync('ssh-keygen', ['-q', '-t', 'ed25519', '-N', passphrase, '-C', name, '-f', file]);
  return file;
}

export async function startSshd(): Promise<Sshd> {
  if (!existsSync(SSHD)) throw new Error(`${SSHD} is missing: install the Debian package 'openssh-server' (scripts/install-services.sh does)`);
  const dir = mkdtempSync(join(tmpdir(), 'sshd-'));
  const port = await freePort();
  const user = userInfo().username;
  const hostKey = keygen(dir, 'host_key');
  const key = keygen(dir, 'client_key');
  const passphrase = 'correct horse battery';
  const protectedKey = keygen(dir, 'client_key_protected', passphrase);
  writeFileSync(join(dir, 'authorized_keys'), readFileSync(`${key}.pub`, 'utf8') + readFileSync(`${protectedKey}.pub`, 'utf8'), { mode: 0o600 });
  const config = join(dir, 'sshd_config');
  writeFileSync(config, [
    `Port ${port}`, 'ListenAddress 127.0.0.1', `HostKey ${hostKey}`, `PidFile ${join(dir, 'sshd.pid')}`,
    `AuthorizedKeysFile ${join(dir, 'authorized_keys')}`, 'PubkeyAuthentication yes', 'PasswordAuthentication no',
    'KbdInteractiveAuthentication no', 'UsePAM no', 'StrictModes no', `PermitRootLogin ${user === 'root' ? 'prohibit-password' : 'no'}`,
    `AllowUsers ${user}`, 'Subsystem sftp internal-sftp', 'LogLevel VERBOSE', '',
  ].join('\n'));
  if (process.getuid?.() === 0) mkdirSync('/run/sshd', { recursive: true, mode: 0o755 }); // sshd's privilege separation folder
  const data = join(dir, 'data');
  mkdirSync(data);
  const svc = await run('sshd', SSHD, ['-D', '-e', '-f', config], port, dir);
  return { ...svc, url: `sftp://127.0.0.1:${port}`, user, key: readFileSync(key, 'utf8'), protectedKey: readFileSync(protectedKey, 'utf8'), passphrase, dir: data };
}
