// Test support: a real SMTP server (Debian's python3-aiosmtpd, test/support/smtp-server.py) on a free loopback port,
// optionally with STARTTLS or implicit TLS (a self-signed certificate made with openssl) and AUTH; the messages it
// receives, parsed by Python's email package (headers, bodies, attachment bytes).
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from './services.js';

const PYTHON = '/usr/bin/python3';

export interface ReceivedMail {
  from: string; to: string[]; tls: boolean; auth: boolean; headers: Record<string, string>; text: string | null; html: string | null;
  parts: { name: string | null; type: string; disposition: string | null; cid: string | null; data: string }[];
}

export interface SmtpServer { port: number; messages: ReceivedMail[]; stop(): Promise<void> }

/** A self-signed certificate for 127.0.0.1 / localhost (PEM), made with openssl in a temporary directory. */
export function selfSignedCert(): { cert: string; key: string; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'smtp-cert-'));
  execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1',
    '-addext', 'subjectAltName=IP:127.0.0.1,DNS:localhost', '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')], { stdio: 'pipe' });
  return { cert: readFileSync(join(dir, 'cert.pem'), 'utf8'), key: readFileSync(join(dir, 'key.pem'), 'utf8'), dir };
}

export async function startSmtp(opts: { tls?: { dir: string; implicit?: boolean; require?: boolean }; auth?: string } = {}): Promise<SmtpServer> {
  let ok = false;
  try { execFileSync(PYTHON, ['-c', 'import aiosmtpd'], { stdio: 'pipe' }); ok = true; } catch { /* missing */ }
  if (!existsSync(PYTHON) || !ok) throw new Error("python3-aiosmtpd is missing: install the Debian package 'python3-aiosmtpd' (scripts/install-services.sh does)");
  const port = await freePort();
  const args = [new URL('./smtp-server.py', import.meta.url).pathname, '--port', String(port)];
  if (opts.tls) {
    args.push('--cert', join(opts.tls.dir, 'cert.pem'), '--key', join(opts.tls.dir, 'key.pem'));
    if (opts.tls.implicit) args.push('--implicit-tls');
    if (opts.tls.require) args.push('--require-tls');
  }
  if (opts.auth) args.push('--auth', opts.auth);
  const proc = spawn(PYTHON, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  const messages: ReceivedMail[] = [];
  let buf = '';
  let err = '';
  proc.stderr.on('data', (d) => { err = (err + d).slice(-4000); });
  await new Promise<void>((resolve, reject) => {
    proc.once('exit', (code) => reject(new Error(`smtp-server.py exited with ${code}: ${err}`)));
    proc.stdout.on('data', (d) => {
      buf += d;
      for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
        const line = buf.slice(0, i).trim();
        buf = buf.slice(i + 1);
        if (line === 'READY') resolve();
        else if (line) messages.push(JSON.parse(line));
      }
    });
  });
  return {
    port, messages,
    stop: async () => {
      if (proc.exitCode !== null) return;
      const exited = new Promise((r) => proc.once('exit', r));
      proc.stdin.end();
      const t = setTimeout(() => proc.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(t);
    },
  };
}

export const removeDir = (dir: string) => rmSync(dir, { recursive: true, force: true });
