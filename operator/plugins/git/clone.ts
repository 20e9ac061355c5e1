// git.Clone: Kestra's plugin-git Clone with the `git` command line, into the task's working directory (inside a
// WorkingDirectory the clone is there for the next tasks). Hostile flows: only the transports GIT_ALLOWED_PROTOCOLS
// lists run (never `ext::`, nor local paths unless `file` is listed), checked here and by git itself
// (GIT_ALLOW_PROTOCOL, submodules included); git runs with no system or user configuration (no host credential
// helper); credentials reach it through askpass scripts reading its environment, never the command line, the logs
// (masked) or the clone's .git/config; symbolic links are checked out as plain files.
import { chmod, mkdir, mkdtemp, readdir, rename, rm, rmdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { isAbsolute, join, relative, resolve } from 'node:path';
import { definePlugin, p } from '../define.js';
import { runProcess } from '../scripts/process.js';
import type { RunContext } from '../types.js';

/** Transports a flow may clone over unless GIT_ALLOWED_PROTOCOLS says otherwise (`file` reads the server's disk). */
export const DEFAULT_GIT_PROTOCOLS = ['https', 'http', 'ssh', 'git'] as const;

export function allowedProtocols(env: Record<string, string | undefined> = process.env): string[] {
  const raw = env.GIT_ALLOWED_PROTOCOLS;
  if (raw === undefined || raw.trim() === '') return [...DEFAULT_GIT_PROTOCOLS];
  return raw.split(',').map((s) => s.trim().toLowerCase()).filter(Boolean);
}

/**
 * The transport git would use for `url`, by git's own rules: `<helper>::<address>` is a remote helper (`ext`, `fd`...),
 * `<scheme>://` a URL, `[user@]host:path` (a colon before any slash) ssh, anything else a local path (`file`).
 */
export function gitProtocol(url: string): string {
  const helper = /^([A-Za-z][A-Za-z0-9+.-]*)::/.exec(url);
  if (helper) return helper[1]!.toLowerCase();
  const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//.exec(url);
  if (scheme) {
    const s = scheme[1]!.toLowerCase();
    return s === 'git+ssh' || s === 'ssh+git' ? 'ssh' : s;
  }
  const colon = url.indexOf(':');
  const slash = url.indexOf('/');
  if (colon > 0 && (slash < 0 || colon < slash)) return 'ssh';
  return 'file';
}

/** `url` without a password in its user info (what git keeps in .git/config), and the password if there was one. */
export function withoutPassword(url: string): { url: string; password?: string } {
  const m = /^([A-Za-z][A-Za-z0-9+.-]*:\/\/)([^/@]*)@/.exec(url);
  if (!m || !m[2]!.includes(':')) return { url };
  const [user, ...rest] = m[2]!.split(':');
  return { url: `${m[1]}${user}@${url.slice(m[0].length)}`, password: decodeURIComponent(rest.join(':')) };
}

/** `directory` inside the working directory (refused when it would leave it). */
export function targetDir(workingDir: string, directory: string | undefined): string {
  if (directory === undefined || directory === '' || directory === '.') return workingDir;
  const full = resolve(workingDir, directory);
  const rel = relative(resolve(workingDir), full);
  if (isAbsolute(directory) || rel === '' || rel.startsWith('..') || isAbsolute(rel)) {
    throw new Error(`Property 'directory' must be a path inside the working directory, got '${directory}'`);
  }
  return full;
}

const ASKPASS = `#!/bin/sh
case "$1" in
  Username*) printf '%s\\n' "$FLOWPILOT_GIT_USERNAME" ;;
  Password*) printf '%s\\n' "$FLOWPILOT_GIT_PASSWORD" ;;
  *) printf '%s\\n' "$FLOWPILOT_GIT_PASSPHRASE" ;;
esac
`;

export interface Auth { username?: string; password?: string; privateKey?: string; passphrase?: string }

/** The environment git runs in: isolated from the server's git and ssh configuration, credentials through askpass. */
async function gitEnv(home: string, auth: Auth, protocols: string[]): Promise<Record<string, string>> {
  const askpass = join(home, 'askpass.sh');
  await writeFile(askpass, ASKPASS, { mode: 0o700 });
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: home,
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_TERMINAL_PROMPT: '0',
    GIT_ALLOW_PROTOCOL: protocols.join(':'),
    GIT_ASKPASS: askpass,
    LANG: 'C',
  };
  if (auth.username !== undefined) env.FLOWPILOT_GIT_USERNAME = auth.username;
  if (auth.password !== undefined) env.FLOWPILOT_GIT_PASSWORD = auth.password;
  const ssh = ['ssh', '-F', '/dev/null', '-o', 'IdentityAgent=none', '-o', 'StrictHostKeyChecking=accept-new',
    '-o', `UserKnownHostsFile=${join(home, 'known_hosts')}`, '-o', 'PasswordAuthentication=no', '-o', 'KbdInteractiveAuthentication=no'];
  if (auth.privateKey !== undefined) {
    const key = join(home, 'id_key');
    await writeFile(key, auth.privateKey.endsWith('\n') ? auth.privateKey : auth.privateKey + '\n', { mode: 0o600 });
    ssh.push('-i', key, '-o', 'IdentitiesOnly=yes');
  }
  if (auth.passphrase !== undefined) {
    env.FLOWPILOT_GIT_PASSPHRASE = auth.passphrase;
    env.SSH_ASKPASS = askpass;
    env.SSH_ASKPASS_REQUIRE = 'force';
  } else {
    ssh.push('-o', 'BatchMode=yes');
  }
  env.GIT_SSH_COMMAND = ssh.map((a) => `'${a}'`).join(' ');
  return env;
}

/**
 * Runs git (hooks off, symbolic links as files); stdout lines are returned (and logged unless `quiet`), stderr logged.
 * A non-zero exit fails with git's last messages, unless `okCodes` lists it (then its code is in the result).
 */
export async function git(ctx: RunContext, args: string[], cwd: string, env: Record<string, string>,
  opts: { quiet?: boolean; okCodes?: number[] } = {}): Promise<{ code: number; stdout: string[] }> {
  const stderr: string[] = [];
  const stdout: string[] = [];
  const outcome = await runProcess({
    command: ['git', '-c', 'core.symlinks=false', '-c', 'core.hooksPath=/dev/null', ...args],
    cwd, env, signal: ctx.signal, track: ctx.processes,
    onStdout: (line) => { stdout.push(line); if (!opts.quiet) ctx.logger.info(line); },
    onStderr: (line) => { if (line.trim()) { stderr.push(line); ctx.logger.info(line); } },
  });
  if (outcome.killed || ctx.signal.aborted) throw new Error('Task killed');
  if (outcome.exitCode !== 0 && !(opts.okCodes ?? []).includes(outcome.exitCode)) {
    throw new Error(`git ${args[0]} failed with exit code ${outcome.exitCode}: ${stderr.slice(-6).join(' / ') || 'no message'}`);
  }
  return { code: outcome.exitCode, stdout };
}

/** Refuses a URL whose transport GIT_ALLOWED_PROTOCOLS does not list; returns the allowed list (for git's own check). */
export function checkTransport(task: string, url: string): string[] {
  const protocols = allowedProtocols();
  const protocol = gitProtocol(url);
  if (!protocols.includes(protocol)) {
    throw new Error(`${task}: the '${protocol}' transport of '${url}' is not allowed (allowed: ${protocols.join(', ')}; setting GIT_ALLOWED_PROTOCOLS)`);
  }
  return protocols;
}

/** A private folder for git's HOME, askpass script and key file, removed after `fn`. */
export async function withGitHome<T>(auth: Auth, protocols: string[], fn: (env: Record<string, string>) => Promise<T>): Promise<T> {
  const home = await mkdtemp(join(tmpdir(), 'git-clone-'));
  try {
    await chmod(home, 0o700);
    return await fn(await gitEnv(home, auth, protocols));
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}

export interface CloneRequest { url: string; branch?: string; depth?: number; commit?: string; tag?: string; noTags?: boolean; cloneSubmodules?: boolean }

/** Clones into `target` (made when missing; a non-empty one gets the clone moved in beside its files). */
export async function cloneInto(ctx: RunContext, env: Record<string, string>, req: CloneRequest, target: string): Promise<void> {
  const stripped = withoutPassword(req.url);
  if (stripped.password) ctx.secrets.add(stripped.password);
  await mkdir(target, { recursive: true });
  const empty = (await readdir(target)).length === 0;
  const into = empty ? target : await mkdtemp(join(target, '.clone-'));
  const ref = req.commit === undefined ? (req.tag ?? req.branch) : undefined;
  const args = ['clone', '--quiet',
    ...(req.depth !== undefined ? ['--depth', String(req.depth)] : []),
    ...(ref !== undefined ? ['--branch', ref] : []),
    ...(req.noTags ? ['--no-tags'] : []),
    ...(req.cloneSubmodules ? ['--recurse-submodules'] : []),
    '--', req.url, into];
  ctx.logger.info(`Cloning ${stripped.url} into ${relative(ctx.workingDir, target) || 'the working directory'}`);
  try {
    await git(ctx, args, target, env);
    if (req.commit !== undefined) await git(ctx, ['checkout', '--quiet', '--detach', req.commit], into, env);
    if (stripped.password) await git(ctx, ['remote', 'set-url', 'origin', stripped.url], into, env);
    if (!empty) await moveInto(into, target);
  } catch (err) {
    if (!empty) await rm(into, { recursive: true, force: true });
    throw err;
  }
}

/** Moves the clone made beside a non-empty target into it (a WorkingDirectory seeded with input files, say). */
async function moveInto(from: string, to: string): Promise<void> {
  const names = await readdir(from);
  const existing = new Set(await readdir(to));
  const clash = names.find((n) => existing.has(n));
  if (clash) throw new Error(`Cannot clone into '${to}': '${clash}' already exists there`);
  for (const n of names) await rename(join(from, n), join(to, n));
  await rmdir(from);
}

export const gitClone = definePlugin({
  type: 'git.Clone',
  title: 'Clone a Git repository.',
  description: 'Clones a repository with the `git` command line into the task\'s working directory (or `directory` inside it): inside a `WorkingDirectory`, the next tasks see the files. Shallow (`depth: 1`) unless `commit` or `tag` is set. Transports: those `GIT_ALLOWED_PROTOCOLS` lists (default `https,http,ssh,git`; `file` and local paths only when listed; remote helpers such as `ext::` never unless listed). HTTP credentials (`username`/`password`) and SSH keys (`privateKey`/`passphrase`) are masked and never written to the clone\'s `.git/config`; a password inside the URL is removed from it too. SSH host keys are accepted on first use (no known_hosts is kept). Symbolic links are checked out as plain files. Not supported: Kestra\'s `cache`, `cacheTtl`, `cloneAllBranches`, `gitConfig`, `trustedCaPemPath`, proxy and timeout settings.',
  properties: {
    url: p.string().required().describe('Repository URL (`https://`, `ssh://` or `user@host:path`, `git://`).'),
    directory: p.string().describe('Folder under the working directory to clone into; the working directory itself when unset.'),
    branch: p.string().describe('Branch to check out (the remote\'s default branch when unset); ignored when `commit` or `tag` is set.'),
    depth: p.integer({ min: 1 }).default(1).describe('Shallow clone depth; ignored when `commit` or `tag` is set (full history).'),
    commit: p.string().describe('Commit to check out (detached HEAD, full clone).'),
    tag: p.string().describe('Tag to check out (ignored when `commit` is set).'),
    noTags: p.boolean().default(false).describe('Fetch no tags.'),
    cloneSubmodules: p.boolean().default(false).describe('Also clone the submodules (over the same allowed transports).'),
    username: p.string().describe('HTTP user name.'),
    password: p.string().secret().describe('HTTP password or personal access token.'),
    privateKey: p.string().secret().describe('PEM or OpenSSH private key for SSH URLs.'),
    passphrase: p.string().secret().describe('Passphrase of `privateKey`.'),
  },
  outputs: { directory: { type: 'string', description: 'Path of the clone on the worker.' } },
  examples: [{
    title: 'Clone a repository and run a script from it in the same working directory.',
    code: `id: git_python\nnamespace: company.team\ntasks:\n  - id: wdir\n    type: io.kestra.plugin.core.flow.WorkingDirectory\n    tasks:\n      - id: clone\n        type: io.kestra.plugin.git.Clone\n        url: https://github.com/kestra-io/examples\n        branch: main\n      - id: python\n        type: io.kestra.plugin.scripts.python.Commands\n        commands:\n          - python examples/scripts/etl_script.py\n`,
  }],
  async run(ctx, props) {
    const protocols = checkTransport('git.Clone', props.url);
    const target = targetDir(ctx.workingDir, props.directory);
    const full = props.commit !== undefined || props.tag !== undefined;
    await withGitHome(props, protocols, (env) => cloneInto(ctx, env, { ...props, depth: full ? undefined : props.depth }, target));
    return { state: 'SUCCESS', outputs: { directory: target } };
  },
});
