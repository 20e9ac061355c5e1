// fs.sftp.* against Debian's OpenSSH server (sshd's internal SFTP) on loopback, logging in with keys: upload,
// list, download, delete, in a flow through the embedded engine and one by one; credentials masked; bounds.
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type Embedded } from '../../../test/support/embedded.js';
import { startSshd, type Sshd } from '../../../test/support/sshd.js';
import { getRunnable } from '../index.js';
import { makeTestContext, type TestContext } from '../testing.js';

let sshd: Sshd;
let t: TestContext | undefined;
const savedEnv = { ...process.env };
beforeAll(async () => { sshd = await startSshd(); });
afterAll(async () => { await sshd?.stop(); });
afterEach(async () => {
  await t?.cleanup();
  t = undefined;
  process.env = { ...savedEnv };
});

const conn = () => ({ host: '127.0.0.1', port: sshd.port, username: sshd.user, keyfile: sshd.key });

async function runTask(kind: string, props: Record<string, unknown>) {
  const type = `ai.service.plugin.fs.sftp.${kind}`;
  t = makeTestContext({ task: { id: kind.toLowerCase(), type, ...props } });
  return getRunnable(type)!.run(t.ctx);
}

describe('fs.sftp tasks', () => {
  it('downloads a file with a passphrase-protected key, streamed into internal storage', async () => {
    const big = Buffer.alloc(3 * 1024 * 1024, 'x');
    writeFileSync(join(sshd.dir, 'big.bin'), big);
    const r = await runTask('Download', { ...conn(), keyfile: sshd.protectedKey, passphrase: sshd.passphrase, from: join(sshd.dir, 'big.bin') });
    expect(r.error).toBeUndefined();
    expect(r.outputs!.from).toBe(`sftp://127.0.0.1:${sshd.port}${join(sshd.dir, 'big.bin')}`);
    expect((await t!.ctx.storage.get(r.outputs!.to as string)).equals(big)).toBe(true);
  });

  it('fails to log in with a wrong passphrase or no key, and masks the credentials', async () => {
    const r = await runTask('List', { ...conn(), keyfile: sshd.protectedKey, passphrase: 'not the passphrase', from: sshd.dir });
    expect(r.state).toBe('FAILED');
    expect(r.error).toMatch(/passphrase|decrypt|parse/i);
    expect(r.error).not.toContain('not the passphrase');
    await t!.cleanup(); t = undefined;
    const anonymous = await runTask('List', { host: '127.0.0.1', port: sshd.port, username: sshd.user, password: 'guess-password', from: sshd.dir });
    expect(anonymous.state).toBe('FAILED');
    expect(anonymous.error).toMatch(/authentication/i);
  });

  it('deletes a file, and a missing one only fails with errorOnMissing', async () => {
    writeFileSync(join(sshd.dir, 'gone.txt'), 'bye');
    const r = await runTask('Delete', { ...conn(), uri: join(sshd.dir, 'gone.txt') });
    expect(r.outputs).toEqual({ uri: `sftp://127.0.0.1:${sshd.port}${join(sshd.dir, 'gone.txt')}`, deleted: true });
    expect(existsSync(join(sshd.dir, 'gone.txt'))).toBe(false);
    await t!.cleanup(); t = undefined;
    expect((await runTask('Delete', { ...conn(), uri: join(sshd.dir, 'gone.txt') })).outputs!.deleted).toBe(false);
    await t!.cleanup(); t = undefined;
    const strict = await runTask('Delete', { ...conn(), uri: join(sshd.dir, 'gone.txt'), errorOnMissing: true });
    expect(strict.state).toBe('FAILED');
    expect(strict.error).toContain('No file');
  });

  it('stops a listing at FS_LIST_MAX_ENTRIES', async () => {
    const many = join(sshd.dir, 'many');
    mkdirSync(many);
    for (let i = 0; i < 5; i++) writeFileSync(join(many, `f${i}`), '');
    process.env.FS_LIST_MAX_ENTRIES = '3';
    const r = await runTask('List', { ...conn(), from: many });
    expect(r.state).toBe('FAILED');
    expect(r.error).toMatch(/over the limit of 3 .*FS_LIST_MAX_ENTRIES/);
  });
});

describe('fs.sftp in a flow', () => {
  let e: Embedded;
  beforeAll(async () => {
    e = await startEmbedded({ PATH: process.env.PATH, SECRET_SFTP_KEY: Buffer.from(sshd.key).toString('base64') });
  });
  afterAll(async () => { await e?.close(); });

  it('uploads, lists (recursive, regExp), downloads and deletes', async () => {
    const base = join(sshd.dir, 'flow');
    const { execution: done, runs } = await e.runFlow(`id: sftp
namespace: gitfs.test
pluginDefaults:
  - type: io.kestra.plugin.fs.sftp
    values:
      host: 127.0.0.1
      port: ${sshd.port}
      username: ${sshd.user}
      keyfile: "{{ secret('SFTP_KEY') }}"
tasks:
  - id: write
    type: io.kestra.plugin.core.storage.Write
    content: "a,b\\n1,2\\n"
    extension: .csv
  - id: upload
    type: io.kestra.plugin.fs.sftp.Upload
    from: "{{ outputs.write.uri }}"
    to: ${base}/in/sub/data.csv
  - id: list
    type: io.kestra.plugin.fs.sftp.List
    from: ${base}
    recursive: true
    regExp: ".*\\\\.csv"
  - id: download
    type: io.kestra.plugin.fs.sftp.Download
    from: "{{ outputs.list.files[0].path }}"
  - id: delete
    type: io.kestra.plugin.fs.sftp.Delete
    uri: "{{ outputs.list.files[0].path }}"
  - id: check
    type: io.kestra.plugin.core.debug.Return
    format: "{{ outputs.list.files | length }} {{ outputs.list.files[0].name }} {{ outputs.list.files[0].size }} {{ read(outputs.download.to) | trim }} {{ outputs.delete.deleted }}"
`);
    expect(done.state.current, JSON.stringify(done.taskRunList.map((r: any) => r.outputs))).toBe('SUCCESS');
    expect(runs.upload.outputs.to).toBe(`sftp://127.0.0.1:${sshd.port}${base}/in/sub/data.csv`);
    expect(runs.list.outputs.files[0]).toMatchObject({ path: `${base}/in/sub/data.csv`, fileType: 'FILE', symbolicLink: false });
    expect(runs.check.outputs.value).toBe('1 data.csv 8 a,b\n1,2 true');
    expect(existsSync(`${base}/in/sub/data.csv`)).toBe(false);
  });
});
