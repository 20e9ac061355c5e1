// git.Push: commits files of the working directory (a clone made by git.Clone earlier in the WorkingDirectory, or one
// this task makes from `url`) plus its `inputFiles`, and pushes them to `branch` (created when missing), with the
// same transport rules, isolation and credential handling as git.Clone (clone.ts).
import { access } from 'node:fs/promises';
import { join } from 'node:path';
import { definePlugin, p } from '../define.js';
import { allowedProtocols, checkTransport, cloneInto, git, targetDir, withGitHome } from './clone.js';

export const gitPush = definePlugin({
  type: 'git.Push',
  title: 'Commit and push files to a Git repository.',
  description: 'Commits the files `addFilesPattern` selects (all by default) in `directory` of the working directory and pushes them to `branch`, created when the remote lacks it. With `url`, the repository is first cloned there (shallow, `branch` when it exists); without it, `directory` must hold a clone (a `git.Clone` earlier in the same `WorkingDirectory`; give the credentials again, they are never stored in the clone). `inputFiles` (inline content or `kestra:///` URIs) are written first. Nothing to commit: no push, no `commitId`. Not supported: Kestra\'s `flows` and `namespaceFiles` (push flows and namespace files), `cloneSubmodules`, `dryRun`; Kestra\'s deprecated Push also deleted the files the clone tracked before adding its own, this one keeps them.',
  properties: {
    url: p.string().describe('Repository URL; without it, `directory` must already hold a clone.'),
    directory: p.string().describe('Folder of the working directory holding (or to receive) the clone; the working directory itself when unset.'),
    branch: p.string().required().describe('Branch to commit to and push; created when missing.'),
    commitMessage: p.string().required().describe('Commit message.'),
    inputFiles: p.raw({ anyOf: [{ type: 'object', additionalProperties: { type: 'string' } }, { type: 'string' }] })
      .describe('Files to write before committing: path → content or internal storage URI (or an expression rendering to that map).'),
    addFilesPattern: p.stringList().default(['.']).describe('Paths (folders or files) to add to the commit; `.` is every change.'),
    author: p.object({
      name: p.string().describe('Commit author name (default: `username`, else `flowpilot`).'),
      email: p.string().describe('Commit author e-mail (default: `flowpilot@localhost`).'),
    }).describe('Commit author.'),
    username: p.string().describe('HTTP user name.'),
    password: p.string().secret().describe('HTTP password or personal access token.'),
    privateKey: p.string().secret().describe('PEM or OpenSSH private key for SSH URLs.'),
    passphrase: p.string().secret().describe('Passphrase of `privateKey`.'),
  },
  outputs: { commitId: { type: 'string', description: 'Id of the commit pushed; absent when there was nothing to commit.' } },
  examples: [{
    title: 'Clone, generate a file in a script, push it to a new branch.',
    code: `id: push_new_file\nnamespace: company.team\ntasks:\n  - id: wdir\n    type: io.kestra.plugin.core.flow.WorkingDirectory\n    tasks:\n      - id: clone\n        type: io.kestra.plugin.git.Clone\n        url: https://github.com/kestra-io/scripts\n        branch: main\n        username: git_username\n        password: "{{ secret('GITHUB_ACCESS_TOKEN') }}"\n      - id: generate\n        type: io.kestra.plugin.scripts.shell.Commands\n        commands:\n          - date > generated.txt\n      - id: push\n        type: io.kestra.plugin.git.Push\n        branch: feature_branch\n        commitMessage: add generated.txt\n        username: git_username\n        password: "{{ secret('GITHUB_ACCESS_TOKEN') }}"\n`,
  }],
  async run(ctx, props) {
    const protocols = props.url !== undefined ? checkTransport('git.Push', props.url) : allowedProtocols();
    const target = targetDir(ctx.workingDir, props.directory);
    const commitId = await withGitHome(props, protocols, async (env) => {
      if (props.url !== undefined) {
        const heads = await git(ctx, ['ls-remote', '--heads', '--', props.url, props.branch], ctx.workingDir, env, { quiet: true });
        const exists = heads.stdout.some((l) => l.endsWith(`refs/heads/${props.branch}`));
        if (!exists) ctx.logger.info(`Branch ${props.branch} does not exist, creating it`);
        await cloneInto(ctx, env, { url: props.url, depth: 1, ...(exists ? { branch: props.branch } : {}) }, target);
      } else if (!(await access(join(target, '.git')).then(() => true, () => false))) {
        throw new Error(`git.Push: '${props.directory ?? '.'}' holds no clone: set 'url', or run git.Clone there first (in the same WorkingDirectory)`);
      } else {
        // The clone's remote must use an allowed transport too.
        const remote = await git(ctx, ['remote', 'get-url', 'origin'], target, env, { quiet: true });
        checkTransport('git.Push', remote.stdout[0] ?? '');
      }
      const current = await git(ctx, ['rev-parse', '--abbrev-ref', 'HEAD'], target, env, { quiet: true });
      if (current.stdout[0] !== props.branch) await git(ctx, ['checkout', '--quiet', '-B', props.branch], target, env);
      if (props.inputFiles !== undefined) {
        const { renderInputFiles, writeInputFiles } = await import('../scripts/files.js');
        await writeInputFiles(ctx, target, renderInputFiles(ctx, props.inputFiles));
      }
      await git(ctx, ['add', '--', ...props.addFilesPattern], target, env);
      const staged = await git(ctx, ['diff', '--cached', '--quiet'], target, env, { okCodes: [1] });
      if (staged.code === 0) {
        ctx.logger.info('No changes to commit. Skipping push.');
        return undefined;
      }
      const name = props.author?.name ?? props.username ?? 'flowpilot';
      const email = props.author?.email ?? 'flowpilot@localhost';
      const who = { GIT_AUTHOR_NAME: name, GIT_AUTHOR_EMAIL: email, GIT_COMMITTER_NAME: name, GIT_COMMITTER_EMAIL: email };
      await git(ctx, ['commit', '--quiet', '-m', props.commitMessage], target, { ...env, ...who });
      await git(ctx, ['push', '--quiet', 'origin', `HEAD:refs/heads/${props.branch}`], target, env);
      const head = await git(ctx, ['rev-parse', 'HEAD'], target, env, { quiet: true });
      ctx.logger.info(`Pushed ${head.stdout[0]} to ${props.branch}`);
      return head.stdout[0];
    });
    return { state: 'SUCCESS', outputs: commitId ? { commitId } : {} };
  },
});
