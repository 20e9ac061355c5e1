// The caller's bucket through the minio client: endpoint and base credentials from configuration, the
// request's region, `role_arn` exchanged for temporary credentials with STS AssumeRole, GCS via its S3 endpoint.
import { Client } from 'minio';
import { AssumeRoleProvider } from 'minio/dist/esm/AssumeRoleProvider.mjs';
import type { StorageConfig } from './config.js';

export interface BucketAccess {
  provider: 's3' | 'gcs';
  bucket: string;
  region?: string;
  roleArn?: string;
  /** Names the STS session (shows in the caller's CloudTrail). */
  sessionName: string;
}

/** A failure to reach the bucket or an object in it, with a message meant for the job's caller. */
export class StorageError extends Error {
  constructor(message: string) { super(message); this.name = 'StorageError'; }
}

interface Endpoint { endPoint: string; port?: number; useSSL: boolean; pathStyle: boolean }

function endpointOf(cfg: StorageConfig, access: BucketAccess): Endpoint {
  const url = access.provider === 'gcs' ? cfg.gcsEndpoint : cfg.endpoint;
  if (!url) {
    const region = access.region ?? cfg.region;
    return { endPoint: region === 'us-east-1' ? 's3.amazonaws.com' : `s3.${region}.amazonaws.com`, useSSL: true, pathStyle: false };
  }
  const u = new URL(url);
  return {
    endPoint: u.hostname, useSSL: u.protocol === 'https:', pathStyle: true,
    ...(u.port ? { port: Number(u.port) } : {}),
  };
}

/** The storage endpoint a request's bucket is reached at, for messages (`http://127.0.0.1:9000`, `https://s3.eu-west-1.amazonaws.com`). */
export function endpointUrl(cfg: StorageConfig, access: Pick<BucketAccess, 'provider' | 'region'>): string {
  const ep = endpointOf(cfg, { ...access, bucket: '', sessionName: '' });
  return `${ep.useSSL ? 'https' : 'http'}://${ep.endPoint}${ep.port ? `:${ep.port}` : ''}`;
}

/** A minio client for the request's bucket. */
export function bucketClient(cfg: StorageConfig, access: BucketAccess): Client {
  const ep = endpointOf(cfg, access);
  const region = access.region ?? cfg.region;
  const base = { accessKey: cfg.accessKeyId ?? '', secretKey: cfg.secretAccessKey ?? '' };
  if (access.roleArn && access.provider === 's3') {
    const credentialsProvider = new AssumeRoleProvider({
      stsEndpoint: cfg.stsEndpoint, ...base, sessionToken: cfg.sessionToken, region,
      roleArn: access.roleArn, roleSessionName: access.sessionName.replace(/[^\w+=,.@-]/g, '-').slice(0, 64),
    });
    return new Client({ ...ep, region, ...base, credentialsProvider: credentialsProvider as never });
  }
  return new Client({ ...ep, region, ...base, ...(cfg.sessionToken ? { sessionToken: cfg.sessionToken } : {}) });
}

const codeOf = (e: unknown): string => String((e as { code?: string }).code ?? (e as Error).name ?? '');

/** Reads the input JSON file: a JSON array (see README for element shapes). */
export async function readInputFile(client: Client, bucket: string, key: string, display: string): Promise<unknown[]> {
  let text: string;
  try {
    const stream = await client.getObject(bucket, key);
    const chunks: Buffer[] = [];
    for await (const c of stream) chunks.push(c as Buffer);
    text = Buffer.concat(chunks).toString('utf8');
  } catch (e) {
    const code = codeOf(e);
    if (code === 'NoSuchKey' || code === 'NotFound') throw new StorageError(`input_json_file '${display}' was not found in bucket '${bucket}'`);
    throw unreachable(bucket, e);
  }
  let parsed: unknown;
  try { parsed = JSON.parse(text.replace(/^\uFEFF/, '')); } catch (e) {
    throw new StorageError(`input_json_file '${display}' is not valid JSON: ${(e as Error).message}`);
  }
  if (!Array.isArray(parsed)) throw new StorageError(`input_json_file '${display}' must hold a JSON array`);
  return parsed;
}

const CREDENTIAL_CODES = new Set(['InvalidAccessKeyId', 'SignatureDoesNotMatch', 'AccessDenied', 'ExpiredToken', 'InvalidToken', 'InvalidClientTokenId']);

/** A storage failure as the caller should read it: missing bucket, refused credentials, or the endpoint out of reach. */
export function unreachable(bucket: string, e: unknown, endpoint?: string): StorageError {
  let code = codeOf(e);
  const cause = (e as { cause?: { code?: string } }).cause?.code;
  if ((!code || code === 'Error' || code === 'TypeError') && cause) code = cause;
  const at = endpoint ? ` at ${endpoint}` : '';
  const message = (e as Error).message || code;
  let why: string;
  if (code === 'NoSuchBucket') why = `does not exist${at}`;
  else if (CREDENTIAL_CODES.has(code)) why = `refused the service's credentials${at} (${code}: ${message}); check S3_ACCESS_KEY_ID / S3_SECRET_ACCESS_KEY or role_arn`;
  else why = `is unreachable${at} (${code && code !== message ? `${code}: ` : ''}${message})`;
  return new StorageError(`bucket '${bucket}' ${why}`);
}

/** Writes a text object (JSONL results). */
export async function writeText(client: Client, bucket: string, key: string, text: string, contentType: string): Promise<void> {
  const body = Buffer.from(text, 'utf8');
  try {
    await client.putObject(bucket, key, body, body.length, { 'Content-Type': contentType });
  } catch (e) { throw unreachable(bucket, e); }
}

/** Deletes every object under `prefix` (files this service owns, such as partial results). */
export async function removePrefix(client: Client, bucket: string, prefix: string): Promise<void> {
  const names: string[] = [];
  try {
    for await (const o of client.listObjectsV2(bucket, prefix, true)) names.push((o as { name: string }).name);
    if (names.length) await client.removeObjects(bucket, names);
  } catch (e) { throw unreachable(bucket, e); }
}

/**
 * Object names directly under `prefix` (used so a new result file sorts after everything there). Also the check,
 * before any generation, that the bucket exists and the credentials may use it: a failure names the bucket, the
 * `endpoint` and the cause.
 */
export async function listNames(client: Client, bucket: string, prefix: string, endpoint?: string): Promise<string[]> {
  const names: string[] = [];
  try {
    const stream = client.listObjectsV2(bucket, prefix, false);
    for await (const o of stream) if ((o as { name?: string }).name) names.push((o as { name: string }).name.slice(prefix.length));
  } catch (e) { throw unreachable(bucket, e, endpoint); }
  return names;
}

export async function writeJson(client: Client, bucket: string, key: string, value: unknown): Promise<void> {
  await writeText(client, bucket, key, JSON.stringify(value, null, 2), 'application/json');
}
