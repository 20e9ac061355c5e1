// S3 tasks (Kestra's aws.s3 Upload, Download, List, Delete) through the minio client: endpoint override for
// S3-compatible stores, region, static credentials or an STS-assumed role, bucket and key/prefix.
import { createReadStream, existsSync, realpathSync, statSync } from 'node:fs';
import { isAbsolute, join, sep } from 'node:path';
import { Client } from 'minio';
import { AssumeRoleProvider } from 'minio/dist/esm/AssumeRoleProvider.mjs';
import { regexTest } from '../../expr/index.js';
import { definePlugin, p, type PropValues } from '../define.js';
import type { RunContext } from '../types.js';

/** Connection properties shared by every S3 task (names follow Kestra's AWS plugin). */
const s3Connection = {
  region: p.string().describe('The AWS region (default us-east-1).'),
  accessKeyId: p.string().secret().describe('Access key id (static credentials).'),
  secretKeyId: p.string().secret().describe('Secret access key.'),
  sessionToken: p.string().secret().describe('Session token of temporary credentials.'),
  endpointOverride: p.string().describe('The endpoint of an S3-compatible store (http(s)://host:port).'),
  forcePathStyle: p.boolean().describe('Path-style requests (default: true with endpointOverride).'),
  stsRoleArn: p.string().describe('A role to assume with STS.'),
  stsEndpointOverride: p.string().describe('The STS endpoint (default https://sts.amazonaws.com).'),
  stsRoleSessionName: p.string().describe('The STS session name (default flow-<execution id>).'),
  compatibilityMode: p.boolean().describe('Kestra\'s switch for S3-compatible stores: every store is reached the same way here, so it changes nothing.'),
  bucket: p.string().required().describe('The bucket.'),
};
type S3Connection = PropValues<typeof s3Connection>;

/** An S3 client from the connection properties (empty strings count as unset). */
function s3Client(ctx: RunContext, c: S3Connection): Client {
  const s = (v: string | undefined): string | undefined => v || undefined;
  const region = s(c.region) ?? 'us-east-1';
  const endpoint = s(c.endpointOverride);
  const ep = endpoint ? new URL(endpoint) : undefined;
  const base = {
    endPoint: ep ? ep.hostname : region === 'us-east-1' ? 's3.amazonaws.com' : `s3.${region}.amazonaws.com`,
    ...(ep?.port ? { port: Number(ep.port) } : {}),
    useSSL: ep ? ep.protocol === 'https:' : true,
    pathStyle: c.forcePathStyle ?? Boolean(ep),
    region,
    accessKey: s(c.accessKeyId) ?? '',
    secretKey: s(c.secretKeyId) ?? '',
  };
  const roleArn = s(c.stsRoleArn);
  if (roleArn) {
    const credentialsProvider = new AssumeRoleProvider({
      stsEndpoint: s(c.stsEndpointOverride) ?? 'https://sts.amazonaws.com', accessKey: base.accessKey, secretKey: base.secretKey,
      sessionToken: s(c.sessionToken), region, roleArn, roleSessionName: s(c.stsRoleSessionName) ?? `flow-${ctx.execution.id}`.slice(0, 64),
    });
    return new Client({ ...base, credentialsProvider: credentialsProvider as never });
  }
  const token = s(c.sessionToken);
  return new Client({ ...base, ...(token ? { sessionToken: token } : {}) });
}

const key = () => p.string().required().describe('The object key.');

/** A file of the working directory (relative, or absolute inside it; symbolic links may not lead out of it). */
function workingDirFile(workingDir: string, from: string): string {
  const root = realpathSync(workingDir);
  const path = isAbsolute(from) ? from : join(workingDir, from);
  if (!existsSync(path)) throw new Error(`'from' file not found: ${from}`);
  const real = realpathSync(path);
  if (!real.startsWith(root + sep)) throw new Error(`'from' must be a file of the task's working directory or a kestra:/// URI: ${from}`);
  return real;
}

/** `from`: an internal-storage URI (kestra://...) or a file of the working directory; or inline `content`. */
async function uploadBody(ctx: RunContext, props: { content?: string; from?: string }): Promise<{ body: Buffer | NodeJS.ReadableStream; size?: number }> {
  if (props.content !== undefined) { const b = Buffer.from(props.content, 'utf8'); return { body: b, size: b.length }; }
  const from = props.from;
  if (!from) throw new Error("Missing required property 'from' (or 'content')");
  if (/^[a-z]+:\/\//.test(from)) return { body: await ctx.storage.stream(from), size: await ctx.storage.size(from) };
  const path = workingDirFile(ctx.workingDir, from);
  return { body: createReadStream(path), size: statSync(path).size };
}

export const s3UploadDefinition = definePlugin({
  type: 'aws.s3.Upload',
  title: 'S3 upload',
  description: 'Uploads an internal-storage file, a file of the working directory or inline `content` to an S3 (or S3-compatible) bucket.',
  properties: {
    ...s3Connection,
    key: key(),
    from: p.string().describe('The file: a kestra:/// URI or a file of the task\'s working directory.'),
    content: p.string().describe('Inline content, instead of `from`.'),
    contentType: p.string().default('application/octet-stream').describe('The object\'s Content-Type.'),
  },
  outputs: {
    bucket: { type: 'string', description: 'The bucket.' },
    key: { type: 'string', description: 'The key.' },
    uri: { type: 'string', description: 's3://bucket/key.' },
    etag: { type: 'string', description: 'The object\'s ETag.' },
    versionId: { type: 'string', description: 'Its version (versioned buckets).' },
  },
  examples: [{ title: 'Upload a download', code: 'id: up\ntype: ai.service.plugin.aws.s3.Upload\nregion: eu-west-1\naccessKeyId: "{{ secret(\'AWS_KEY\') }}"\nsecretKeyId: "{{ secret(\'AWS_SECRET\') }}"\nbucket: data\nkey: in/file.csv\nfrom: "{{ outputs.download.uri }}"\n' }],
  async run(ctx, props) {
    const client = s3Client(ctx, props);
    const { bucket, key } = props;
    const { body, size } = await uploadBody(ctx, props);
    const r = await client.putObject(bucket, key, body as Buffer, size, { 'Content-Type': props.contentType });
    ctx.logger.info(`Uploaded s3://${bucket}/${key}`);
    return { state: 'SUCCESS', outputs: { bucket, key, uri: `s3://${bucket}/${key}`, etag: r.etag, versionId: r.versionId ?? undefined } };
  },
});

export const s3DownloadDefinition = definePlugin({
  type: 'aws.s3.Download',
  title: 'S3 download',
  description: 'Downloads an object of an S3 (or S3-compatible) bucket into internal storage.',
  properties: { ...s3Connection, key: key() },
  outputs: {
    uri: { type: 'uri', description: 'The downloaded file.' },
    bucket: { type: 'string', description: 'The bucket.' },
    key: { type: 'string', description: 'The key.' },
    contentLength: { type: 'integer', description: 'Its size in bytes.' },
    contentType: { type: 'string', description: 'Its Content-Type.' },
    etag: { type: 'string', description: 'Its ETag.' },
  },
  examples: [{ title: 'Download an object', code: 'id: down\ntype: ai.service.plugin.aws.s3.Download\nendpointOverride: http://minio:9000\nbucket: data\nkey: in/file.csv\n' }],
  async run(ctx, props) {
    const client = s3Client(ctx, props);
    const { bucket, key } = props;
    const stat = await client.statObject(bucket, key);
    // Streamed into internal storage: an object of any size is never held in memory.
    const name = key.split('/').pop() || 'object';
    const uri = await ctx.storage.put(`${ctx.storagePrefix}/${name}`, await client.getObject(bucket, key));
    ctx.logger.info(`Downloaded s3://${bucket}/${key} (${stat.size} bytes)`);
    return {
      state: 'SUCCESS',
      outputs: { uri, bucket, key, contentLength: stat.size, contentType: stat.metaData?.['content-type'], etag: stat.etag },
    };
  },
});

interface ListedObject { key: string; size: number; lastModified?: string; etag?: string; uri: string }

export const s3ListDefinition = definePlugin({
  type: 'aws.s3.List',
  title: 'S3 list',
  description: 'Lists the objects of a bucket under `prefix` (with `delimiter: /`, one level only), optionally matching `regexp` (RE2), at most `maxKeys`.',
  properties: {
    ...s3Connection,
    prefix: p.string().default('').describe('Only keys starting with it.'),
    delimiter: p.string().describe('`/`: list one level under the prefix, not recursively.'),
    regexp: p.string().describe('Only keys matching this regular expression (RE2 syntax).'),
    maxKeys: p.number({ min: 1 }).default(1000).describe('Most objects listed.'),
    filter: p.enum(['FILES', 'DIRECTORY', 'BOTH'] as const).default('BOTH').describe('Objects (FILES), directory markers (keys ending with /: DIRECTORY) or both.'),
  },
  outputs: {
    objects: { type: 'array', description: 'The objects: {key, size, lastModified, etag, uri}.' },
    count: { type: 'integer', description: 'How many.' },
  },
  examples: [{ title: 'List CSV files', code: 'id: ls\ntype: ai.service.plugin.aws.s3.List\nbucket: data\nprefix: in/\nregexp: ".*\\\\.csv$"\n' }],
  async run(ctx, props) {
    const client = s3Client(ctx, props);
    const { bucket, prefix, maxKeys, filter } = props;
    const re = props.regexp ? regexTest(props.regexp, 'find', 'regexp') : undefined; // RE2: linear time
    const recursive = props.delimiter !== '/';
    const objects: ListedObject[] = [];
    for await (const o of client.listObjectsV2(bucket, prefix, recursive)) {
      const obj = o as { name?: string; size: number; lastModified?: Date; etag?: string };
      if (!obj.name || (re && !re.test(obj.name))) continue;
      if (filter !== 'BOTH' && obj.name.endsWith('/') !== (filter === 'DIRECTORY')) continue;
      objects.push({ key: obj.name, size: obj.size, lastModified: obj.lastModified?.toISOString(), etag: obj.etag, uri: `s3://${bucket}/${obj.name}` });
      if (objects.length >= maxKeys) break;
    }
    ctx.logger.info(`Listed ${objects.length} object(s) in s3://${bucket}/${prefix}`);
    return { state: 'SUCCESS', outputs: { objects, count: objects.length } };
  },
});

export const s3DeleteDefinition = definePlugin({
  type: 'aws.s3.Delete',
  title: 'S3 delete',
  description: 'Deletes an object of a bucket.',
  properties: { ...s3Connection, key: key(), errorOnMissing: p.boolean().default(false).describe('Fail when the object does not exist.') },
  outputs: {
    bucket: { type: 'string', description: 'The bucket.' },
    key: { type: 'string', description: 'The key.' },
    deleted: { type: 'boolean', description: 'Whether it existed.' },
  },
  examples: [{ title: 'Delete an object', code: 'id: rm\ntype: ai.service.plugin.aws.s3.Delete\nbucket: data\nkey: in/file.csv\n' }],
  async run(ctx, props) {
    const client = s3Client(ctx, props);
    const { bucket, key, errorOnMissing } = props;
    let existed = true;
    try { await client.statObject(bucket, key); } catch (e) {
      if ((e as { code?: string }).code !== 'NotFound' && (e as { code?: string }).code !== 'NoSuchKey') throw e;
      existed = false;
    }
    if (!existed && errorOnMissing) throw new Error(`s3://${bucket}/${key} does not exist`);
    if (existed) await client.removeObject(bucket, key);
    ctx.logger.info(existed ? `Deleted s3://${bucket}/${key}` : `s3://${bucket}/${key} did not exist`);
    return { state: 'SUCCESS', outputs: { bucket, key, deleted: existed } };
  },
});

export const s3Definitions = [s3UploadDefinition, s3DownloadDefinition, s3ListDefinition, s3DeleteDefinition];
export const s3UploadPlugin = s3UploadDefinition.runnable;
export const s3DownloadPlugin = s3DownloadDefinition.runnable;
export const s3ListPlugin = s3ListDefinition.runnable;
export const s3DeletePlugin = s3DeleteDefinition.runnable;
