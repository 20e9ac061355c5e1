// fs.sftp.Upload, Download, List and Delete: Kestra's plugin-fs SFTP tasks with ssh2-sftp-client (pure JavaScript
// SSH), files streamed between internal storage and the server. Password, private key and passphrase are secrets
// (masked); the server's host key is accepted as Kestra's default does (no known_hosts); a listing is bounded by
// FS_LIST_MAX_ENTRIES; the `regExp` filter runs on RE2 like every flow regular expression.
import { randomUUID } from 'node:crypto';
import { posix } from 'node:path';
import type SftpClient from 'ssh2-sftp-client';
import { limitError, limitsFromEnv } from '../../core/limits.js';
import { definePlugin, p, type PropValues } from '../define.js';
import type { RunContext } from '../types.js';

const connection = {
  host: p.string().required().describe('SFTP server host name or address.'),
  port: p.integer({ min: 1, max: 65535 }).default(22).describe('SFTP server port.'),
  username: p.string().describe('User name to log in with.'),
  password: p.string().secret().describe('Password to log in with.'),
  keyfile: p.string().secret().describe('Private key (PEM or OpenSSH format, the key itself, not a path) to log in with.'),
  passphrase: p.string().secret().describe('Passphrase of `keyfile`.'),
  rootDir: p.boolean().default(true).describe('Paths are from the server\'s root (`true`, Kestra\'s default) or relative to the user\'s home (`false`: a leading `/` is dropped).'),
};
type Connection = PropValues<typeof connection>;

const CONNECT_TIMEOUT_MS = 20_000;

/** Connects, runs `fn`, always disconnects; a kill or timeout of the task ends the connection. */
async function withSftp<T>(ctx: RunContext, c: Connection, fn: (client: SftpClient) => Promise<T>): Promise<T> {
  const { default: Client } = await import('ssh2-sftp-client');
  const client = new Client('flowpilot');
  const onAbort = (): void => { void client.end().catch(() => undefined); };
  ctx.signal.addEventListener('abort', onAbort, { once: true });
  try {
    await client.connect({
      host: c.host, port: c.port, readyTimeout: CONNECT_TIMEOUT_MS,
      ...(c.username !== undefined ? { username: c.username } : {}),
      ...(c.password !== undefined ? { password: c.password } : {}),
      ...(c.keyfile !== undefined ? { privateKey: c.keyfile } : {}),
      ...(c.passphrase !== undefined ? { passphrase: c.passphrase } : {}),
    });
    return await fn(client);
  } finally {
    ctx.signal.removeEventListener('abort', onAbort);
    await client.end().catch(() => undefined);
  }
}

const remotePath = (c: Connection, path: string): string => (c.rootDir || !path.startsWith('/') ? path : path.replace(/^\/+/, ''));
const sftpUri = (c: Connection, path: string): string =>
  `sftp://${c.host}:${c.port}${path.startsWith('/') ? '' : '/'}${path.split('/').map(encodeURIComponent).join('/')}`;

export const sftpUpload = definePlugin({
  type: 'fs.sftp.Upload',
  title: 'Upload a file to an SFTP server.',
  description: 'Streams one internal storage file to a path on an SFTP server (missing parent folders are created; an existing file is replaced).',
  properties: {
    ...connection,
    from: p.string().required().describe('Internal storage URI of the file to upload.'),
    to: p.string().required().describe('Destination path on the server.'),
  },
  outputs: {
    from: { type: 'uri', description: 'The uploaded internal storage file.' },
    to: { type: 'string', description: 'The destination, as an `sftp://host:port/path` URI.' },
  },
  examples: [{
    title: 'Upload a file written earlier in the flow.',
    code: `- id: upload\n  type: io.kestra.plugin.fs.sftp.Upload\n  host: sftp.example.com\n  username: foo\n  password: "{{ secret('SFTP_PASSWORD') }}"\n  from: "{{ outputs.write.uri }}"\n  to: /upload/dir2/file.txt\n`,
  }],
  async run(ctx, props) {
    const to = remotePath(props, props.to);
    const source = await ctx.storage.stream(props.from);
    await withSftp(ctx, props, async (client) => {
      const parent = posix.dirname(to);
      if (parent !== '.' && parent !== '/' && !(await client.exists(parent))) await client.mkdir(parent, true);
      await client.put(source, to);
    });
    ctx.logger.info(`Uploaded ${props.from} to ${sftpUri(props, to)}`);
    return { state: 'SUCCESS', outputs: { from: props.from, to: sftpUri(props, to) } };
  },
});

export const sftpDownload = definePlugin({
  type: 'fs.sftp.Download',
  title: 'Download a file from an SFTP server.',
  description: 'Streams one file of an SFTP server into internal storage.',
  properties: {
    ...connection,
    from: p.string().required().describe('Path of the file on the server.'),
  },
  outputs: {
    from: { type: 'string', description: 'The downloaded file, as an `sftp://host:port/path` URI.' },
    to: { type: 'uri', description: 'Internal storage URI of the downloaded file.' },
  },
  examples: [{
    title: 'Download a file.',
    code: `- id: download\n  type: io.kestra.plugin.fs.sftp.Download\n  host: sftp.example.com\n  username: foo\n  keyfile: "{{ secret('SFTP_KEY') }}"\n  from: /in/data.csv\n`,
  }],
  async run(ctx, props) {
    const from = remotePath(props, props.from);
    const ext = posix.extname(from).replace(/[^.\w-]/g, '');
    const uri = await withSftp(ctx, props, async (client) => {
      const kind = await client.exists(from);
      if (kind !== '-') throw new Error(kind ? `'${from}' is not a file on the server` : `No file '${from}' on the server`);
      return ctx.storage.put(`${ctx.storagePrefix}/${randomUUID()}${ext}`, client.createReadStream(from));
    });
    return { state: 'SUCCESS', outputs: { from: sftpUri(props, from), to: uri } };
  },
});

const FILE_TYPES: Record<string, string> = { d: 'FOLDER', '-': 'FILE', l: 'FILE' };

export const sftpList = definePlugin({
  type: 'fs.sftp.List',
  title: 'List the files of a folder of an SFTP server.',
  description: 'Lists a folder (and its sub-folders with `recursive`), optionally keeping the paths a regular expression matches whole (RE2 syntax). At most `FS_LIST_MAX_ENTRIES` entries are read.',
  properties: {
    ...connection,
    from: p.string().required().describe('Folder to list on the server.'),
    regExp: p.string().describe('Keep the entries whose full path this regular expression matches (whole match, RE2 syntax).'),
    recursive: p.boolean().default(false).describe('Also list the sub-folders\' content.'),
  },
  outputs: { files: { type: 'array', description: 'The entries: `{path, name, fileType (FILE|FOLDER), symbolicLink, size, userId, groupId, accessDate, updatedDate}`.' } },
  examples: [{
    title: 'List the CSV files of a folder.',
    code: `- id: list\n  type: io.kestra.plugin.fs.sftp.List\n  host: sftp.example.com\n  username: foo\n  password: "{{ secret('SFTP_PASSWORD') }}"\n  from: /in\n  regExp: ".*\\\\.csv"\n`,
  }],
  async run(ctx, props) {
    const limits = limitsFromEnv(process.env);
    const { regexTest } = await import('../../expr/regex.js');
    const filter = props.regExp !== undefined ? regexTest(props.regExp, 'whole', 'regExp') : undefined;
    const root = remotePath(props, props.from);
    const files: Record<string, unknown>[] = [];
    let seen = 0;
    await withSftp(ctx, props, async (client) => {
      const folders = [root];
      while (folders.length > 0) {
        const folder = folders.shift()!;
        for (const e of await client.list(folder)) {
          if (++seen > limits.fsListMaxEntries) throw limitError('fsListMaxEntries', `fs.sftp.List of '${props.from}' reads more entries`, limits);
          const path = posix.join(folder, e.name);
          if (e.type === 'd' && props.recursive) folders.push(path);
          if (filter && !filter.test(path)) continue;
          files.push({
            path, name: e.name, fileType: FILE_TYPES[e.type] ?? 'FILE', symbolicLink: e.type === 'l', size: e.size,
            userId: e.owner, groupId: e.group,
            accessDate: new Date(e.accessTime).toISOString(), updatedDate: new Date(e.modifyTime).toISOString(),
          });
        }
      }
    });
    return { state: 'SUCCESS', outputs: { files } };
  },
});

export const sftpDelete = definePlugin({
  type: 'fs.sftp.Delete',
  title: 'Delete a file of an SFTP server.',
  description: 'Deletes one file of an SFTP server; a missing file is not an error unless `errorOnMissing`.',
  properties: {
    ...connection,
    uri: p.string().required().describe('Path of the file on the server.'),
    errorOnMissing: p.boolean().default(false).describe('Fail when the file does not exist.'),
  },
  outputs: {
    uri: { type: 'string', description: 'The file, as an `sftp://host:port/path` URI.' },
    deleted: { type: 'boolean', description: 'Whether a file was deleted.' },
  },
  examples: [{
    title: 'Delete a processed file.',
    code: `- id: delete\n  type: io.kestra.plugin.fs.sftp.Delete\n  host: sftp.example.com\n  username: foo\n  password: "{{ secret('SFTP_PASSWORD') }}"\n  uri: /in/data.csv\n`,
  }],
  async run(ctx, props) {
    const path = remotePath(props, props.uri);
    const deleted = await withSftp(ctx, props, async (client) => {
      const kind = await client.exists(path);
      if (!kind) {
        if (props.errorOnMissing) throw new Error(`No file '${path}' on the server`);
        return false;
      }
      if (kind === 'd') throw new Error(`'${path}' is a folder: fs.sftp.Delete deletes files`);
      await client.delete(path);
      return true;
    });
    return { state: 'SUCCESS', outputs: { uri: sftpUri(props, path), deleted } };
  },
});

export const sftpDefinitions = [sftpUpload, sftpDownload, sftpList, sftpDelete];
