// S3 tasks (Kestra's aws.s3 Upload, Download, List, Delete) through the minio client: endpoint override for
// S3-compatible stores, region, static credentials or an STS-assumed role, bucket and key/prefix.
import { createReadStream, existsSync, realpathSync, statSync } from 'node:fs';
import { isAbsolute, join, sep } from 'node:path';
import { Client } from 'minio';
import { AssumeRoleProvider } from 'minio/dist/esm/AssumeRoleProvider.mjs';
import { regexTest } from '../../expr/index.js';
import type { RunContext, RunnablePlugin } from '../types.js';
import { plugin, renderBool, renderString, requireString } from '../util.js';

/** Connection properties shared by every S3 task (names follow Kestra's AWS plugin). */
export function s3ClientFromTask(ctx: RunContext): Client {
  const s = (name: string): string | undefined => renderString(ctx, ctx.task[name]) || undefined;
  const region = s('region') ?? 'us-east-1';
  const endpoint = s('endpointOverride');
  const ep = endpoint ? new URL(endpoint) : undefined;
  const base = {
    endPoint: ep ? ep.hostname : region === 'us-east-1' ? 's3.amazonaws.com' : `s3.${region}.amazonaws.com`,
    ...(ep?.port ? { port: Number(ep.port) } : {}),
    useSSL: ep ? ep.protocol === 'https:' : true,
    pathStyle: renderBool(ctx, ctx.task.forcePathStyle, Boolean(ep)),
    region,
    accessKey: s('accessKeyId') ?? '',
    secretKey: s('secretKeyId') ?? '',
  };
  for (const v of [base.accessKey, base.secretKey, s('sessionToken')]) if (v) ctx.secrets.add(v);
  const roleArn = s('stsRoleArn');
  if (roleArn) {
    const credentialsProvider = new AssumeRoleProvider({
      stsEndpoint: s('stsEndpointOverride') ?? 'https://sts.amazonaws.com', accessKey: base.accessKey, secretKey: base.secretKey,
      sessionToken: s('sessionToken'), region, roleArn, roleSessionName: s('stsRoleSessionName') ?? `flow-${ctx.execution.id}`.slice(0, 64),
    });
    return new Client({ ...base, credentialsProvider: credentialsProvider as never });
  }
  const token = s('sessionToken');
  return new Client({ ...base, ...(token ? { sessionToken: token } : {}) });
}

async function readAll(stream: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(Buffer.isBuffer(c) ? c : Buffer.from(c as string));
  return Buffer.concat(chunks);
}

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
async function uploadBody(ctx: RunContext): Promise<{ body: Buffer | NodeJS.ReadableStream; size?: number }> {
  const content = renderString(ctx, ctx.task.content);
  if (content !== undefined) { const b = Buffer.from(content, 'utf8'); return { body: b, size: b.length }; }
  const from = requireString(ctx, 'from');
  if (/^[a-z]+:\/\//.test(from)) return { body: await ctx.storage.stream(from), size: await ctx.storage.size(from) };
  const path = workingDirFile(ctx.workingDir, from);
  return { body: createReadStream(path), size: statSync(path).size };
}

export const s3UploadPlugin: RunnablePlugin = plugin('aws.s3.Upload', async (ctx) => {
  const client = s3ClientFromTask(ctx);
  const bucket = requireString(ctx, 'bucket');
  const key = requireString(ctx, 'key');
  const { body, size } = await uploadBody(ctx);
  const contentType = renderString(ctx, ctx.task.contentType) ?? 'application/octet-stream';
  const r = await client.putObject(bucket, key, body as Buffer, size, { 'Content-Type': contentType });
  ctx.logger.info(`Uploaded s3://${bucket}/${key}`);
  return { state: 'SUCCESS', outputs: { bucket, key, uri: `s3://${bucket}/${key}`, etag: r.etag, versionId: r.versionId ?? undefined } };
});

export const s3DownloadPlugin: RunnablePlugin = plugin('aws.s3.Download', async (ctx) => {
  const client = s3ClientFromTask(ctx);
  const bucket = requireString(ctx, 'bucket');
  const key = requireString(ctx, 'key');
  const stat = await client.statObject(bucket, key);
  const data = await readAll(await client.getObject(bucket, key));
  const name = key.split('/').pop() || 'object';
  const uri = await ctx.storage.put(`${ctx.storagePrefix}/${name}`, data);
  ctx.logger.info(`Downloaded s3://${bucket}/${key} (${data.length} bytes)`);
  return {
    state: 'SUCCESS',
    outputs: { uri, bucket, key, contentLength: data.length, contentType: stat.metaData?.['content-type'], etag: stat.etag },
  };
});

interface ListedObject { key: string; size: number; lastModified?: string; etag?: string; uri: string }

export const s3ListPlugin: RunnablePlugin = plugin('aws.s3.List', async (ctx) => {
  const client = s3ClientFromTask(ctx);
  const bucket = requireString(ctx, 'bucket');
  const prefix = renderString(ctx, ctx.task.prefix) ?? '';
  const regexp = renderString(ctx, ctx.task.regexp);
  const re = regexp ? regexTest(regexp, 'find', 'regexp') : undefined; // RE2: linear time
  const maxKeys = Number(ctx.renderTyped(ctx.task.maxKeys ?? 1000));
  const recursive = renderString(ctx, ctx.task.delimiter) !== '/';
  const objects: ListedObject[] = [];
  for await (const o of client.listObjectsV2(bucket, prefix, recursive)) {
    const obj = o as { name?: string; size: number; lastModified?: Date; etag?: string };
    if (!obj.name || (re && !re.test(obj.name))) continue;
    objects.push({ key: obj.name, size: obj.size, lastModified: obj.lastModified?.toISOString(), etag: obj.etag, uri: `s3://${bucket}/${obj.name}` });
    if (objects.length >= maxKeys) break;
  }
  ctx.logger.info(`Listed ${objects.length} object(s) in s3://${bucket}/${prefix}`);
  return { state: 'SUCCESS', outputs: { objects, count: objects.length } };
});

export const s3DeletePlugin: RunnablePlugin = plugin('aws.s3.Delete', async (ctx) => {
  const client = s3ClientFromTask(ctx);
  const bucket = requireString(ctx, 'bucket');
  const key = requireString(ctx, 'key');
  const errorOnMissing = renderBool(ctx, ctx.task.errorOnMissing, false);
  let existed = true;
  try { await client.statObject(bucket, key); } catch (e) {
    if ((e as { code?: string }).code !== 'NotFound' && (e as { code?: string }).code !== 'NoSuchKey') throw e;
    existed = false;
  }
  if (!existed && errorOnMissing) throw new Error(`s3://${bucket}/${key} does not exist`);
  if (existed) await client.removeObject(bucket, key);
  ctx.logger.info(existed ? `Deleted s3://${bucket}/${key}` : `s3://${bucket}/${key} did not exist`);
  return { state: 'SUCCESS', outputs: { bucket, key, deleted: existed } };
});

export const s3Plugins: RunnablePlugin[] = [s3UploadPlugin, s3DownloadPlugin, s3ListPlugin, s3DeletePlugin];
