// Shared fixtures of the inference tests: a real S3-protocol server (s3rver), the inference service behind
// a real Koa HTTP server on port 0, and small HTTP helpers. Nothing here is a test double.
import { mkdtempSync, rmSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Koa from 'koa';
import { Client } from 'minio';
import S3rver from 's3rver';
import { createInferenceRouter } from '../../api/inference/router.js';
import { startInferenceService } from '../../operator/inference/index.js';

export const S3_KEY = 'S3RVER';
export const MODELS_DIR = join(tmpdir(), 'flowpilot-models');

export interface S3Fixture { endpoint: string; port: number; client: Client; dir: string; close(): Promise<void> }

export async function startS3(buckets: string[] = ['bucket']): Promise<S3Fixture> {
  const dir = mkdtempSync(join(tmpdir(), 's3rver-'));
  const server = new S3rver({
    address: '127.0.0.1', port: 0, directory: dir, silent: true, configureBuckets: buckets.map((name) => ({ name })),
  });
  const addr = await server.run();
  const client = new Client({ endPoint: '127.0.0.1', port: addr.port, useSSL: false, accessKey: S3_KEY, secretKey: S3_KEY, pathStyle: true, region: 'us-east-1' });
  return {
    endpoint: `http://127.0.0.1:${addr.port}`, port: addr.port, client, dir,
    async close() { await server.close(); rmSync(dir, { recursive: true, force: true }); },
  };
}

export function s3Env(s3: S3Fixture, tokens: string[]): NodeJS.ProcessEnv {
  return {
    ACCESS_TOKENS: tokens.join(','), S3_ENDPOINT: s3.endpoint, S3_ACCESS_KEY_ID: S3_KEY, S3_SECRET_ACCESS_KEY: S3_KEY,
    INFERENCE_MODELS_DIR: MODELS_DIR,
  };
}

export interface ServiceFixture {
  url: string;
  port: number;
  service: Awaited<ReturnType<typeof startInferenceService>>;
  dataDir: string;
  close(): Promise<void>;
}

/**
 * Listens first, then starts the service with `env(port)`, so a model can be mapped to this very server's
 * OpenAI-compatible endpoint.
 */
export async function startService(env: (port: number) => NodeJS.ProcessEnv, dataDir?: string): Promise<ServiceFixture> {
  const dir = dataDir ?? mkdtempSync(join(tmpdir(), 'inference-'));
  const app = new Koa();
  let routes: Koa.Middleware = async (_ctx, next) => next();
  app.use((ctx, next) => routes(ctx, next));
  const server: Server = await new Promise((resolve) => { const s = app.listen(0, '127.0.0.1', () => resolve(s)); });
  const port = (server.address() as AddressInfo).port;
  const service = await startInferenceService({ dataDir: dir, env: env(port), log: () => {} });
  routes = createInferenceRouter(service).routes() as Koa.Middleware;
  return {
    url: `http://127.0.0.1:${port}`, port, service, dataDir: dir,
    async close() {
      await new Promise((r) => server.close(r));
      await service.stop();
      if (!dataDir) rmSync(dir, { recursive: true, force: true });
    },
  };
}

export async function postJson(url: string, body: unknown, headers: Record<string, string> = {}): Promise<{ status: number; body: any }> {
  const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

/** Polls get_result until SUCCESS or FAILED (bounded by a count, not a clock assertion). */
export async function waitForResult(base: string, taskId: string, token?: string, maxPolls = 1200): Promise<any> {
  for (let i = 0; i < maxPolls; i++) {
    const r = await fetch(`${base}/get_result/${taskId}`, token ? { headers: { authorization: `Bearer ${token}` } } : {});
    const body = await r.json() as { status: string };
    if (body.status === 'SUCCESS' || body.status === 'FAILED') return body;
    await new Promise((res) => setTimeout(res, 100));
  }
  throw new Error(`job ${taskId} did not finish`);
}

export async function readObject(client: Client, bucket: string, key: string): Promise<string> {
  const stream = await client.getObject(bucket, key);
  const chunks: Buffer[] = [];
  for await (const c of stream) chunks.push(c as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

export async function listKeys(client: Client, bucket: string, prefix: string): Promise<string[]> {
  const out: string[] = [];
  for await (const o of client.listObjectsV2(bucket, prefix, true)) out.push((o as { name: string }).name);
  return out;
}
