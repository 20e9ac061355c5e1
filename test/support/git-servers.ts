// Test support: real git servers on loopback: `git daemon` (git://, anonymous) and git's own smart HTTP server
// (`git http-backend`, the CGI program git ships) behind a small Node HTTP server asking for basic auth, over bare
// repositories the test makes with the git command line.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, run, type Service } from './services.js';

const GIT_ENV = { GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null', GIT_AUTHOR_NAME: 't', GIT_AUTHOR_EMAIL: 't@example.com', GIT_COMMITTER_NAME: 't', GIT_COMMITTER_EMAIL: 't@example.com' };
const gitSync = (cwd: string, ...args: string[]): string =>
  execFileSync('git', ['-c', 'init.defaultBranch=main', ...args], { cwd, env: { ...process.env, ...GIT_ENV }, encoding: 'utf8' });

/** Makes `<root>/<name>.git`, a bare repository: `main` with `files`, a `dev` branch with `devFiles` on top, tag `v1` on main. */
export function makeBareRepo(root: string, name: string, files: Record<string, string>, devFiles: Record<string, string> = {}): string {
  const work = mkdtempSync(join(tmpdir(), 'git-work-'));
  try {
    gitSync(work, 'init', '-q');
    for (const [f, c] of Object.entries(files)) writeFileSync(join(work, f), c);
    gitSync(work, 'add', '-A');
    gitSync(work, 'commit', '-qm', 'first');
    gitSync(work, 'tag', 'v1');
    gitSync(work, 'checkout', '-qb', 'dev');
    for (const [f, c] of Object.entries(devFiles)) writeFileSync(join(work, f), c);
    gitSync(work, 'add', '-A');
    gitSync(work, 'commit', '-qm', 'dev', '--allow-empty');
    gitSync(work, 'checkout', '-q', 'main');
    const bare = join(root, `${name}.git`);
    gitSync(root, 'clone', '-q', '--bare', work, bare);
    return bare;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** `git daemon` serving every repository under `root` at git://127.0.0.1:<port>/<name>.git, anonymous pushes allowed. */
export async function startGitDaemon(root: string): Promise<Service> {
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'gitd-'));
  const svc = await run('git daemon', 'git', ['daemon', '--reuseaddr', '--export-all', '--enable=receive-pack', `--base-path=${root}`, '--listen=127.0.0.1', `--port=${port}`, root],
    port, dir, { env: GIT_ENV });
  return { ...svc, url: `git://127.0.0.1:${port}` };
}

/** Smart HTTP (`git http-backend`) for the repositories under `root`, at http://127.0.0.1:<port>/<name>.git, basic auth. */
export async function startGitHttp(root: string, user: string, password: string): Promise<Service & { requests: string[] }> {
  const requests: string[] = [];
  const expected = 'Basic ' + Buffer.from(`${user}:${password}`).toString('base64');
  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    requests.push(`${req.method} ${req.url} ${req.headers.authorization ? 'auth' : 'anonymous'}`);
    if (req.headers.authorization !== expected) {
      res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="git"' }).end();
      return;
    }
    const url = new URL(req.url ?? '/', 'http://x');
    const cgi = spawn('git', ['http-backend'], {
      env: {
        ...process.env, ...GIT_ENV, GIT_PROJECT_ROOT: root, GIT_HTTP_EXPORT_ALL: '1', PATH_INFO: url.pathname,
        QUERY_STRING: url.search.slice(1), REQUEST_METHOD: req.method ?? 'GET', CONTENT_TYPE: req.headers['content-type'] ?? '',
        REMOTE_USER: user, REMOTE_ADDR: '127.0.0.1', ...(req.headers['content-encoding'] ? { HTTP_CONTENT_ENCODING: req.headers['content-encoding'] } : {}),
      },
    });
    req.pipe(cgi.stdin);
    // The CGI answer: headers (Status: among them) up to a blank line, then the body.
    let head = Buffer.alloc(0);
    let started = false;
    cgi.stdout.on('data', (chunk: Buffer) => {
      if (started) { res.write(chunk); return; }
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf('\r\n\r\n');
      if (end < 0) return;
      started = true;
      const headers: Record<string, string> = {};
      let status = 200;
      for (const line of head.subarray(0, end).toString().split('\r\n')) {
        const i = line.indexOf(':');
        const k = line.slice(0, i).trim();
        const v = line.slice(i + 1).trim();
        if (k.toLowerCase() === 'status') status = Number(v.split(' ')[0]);
        else headers[k] = v;
      }
      res.writeHead(status, headers);
      res.write(head.subarray(end + 4));
    });
    cgi.on('close', () => res.end());
  };
  const server = createServer(handle);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  const stop = () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); });
  return { host: '127.0.0.1', port, url: `http://127.0.0.1:${port}`, stop, proc: undefined as never, requests };
}
