// A TEST DOUBLE of AWS STS: answers AssumeRole with the s3rver credentials (plus a session token) and records
// each call's RoleArn, so tests can prove that `role_arn` is exchanged through a configurable STS endpoint.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { S3_KEY } from './helpers.js';

export interface StsTestDouble { endpoint: string; calls: { roleArn: string | null; sessionName: string | null }[]; close(): Promise<void> }

export async function startStsTestDouble(): Promise<StsTestDouble> {
  const calls: StsTestDouble['calls'] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', () => {
      const p = new URLSearchParams(body);
      calls.push({ roleArn: p.get('RoleArn'), sessionName: p.get('RoleSessionName') });
      const exp = new Date(Date.now() + 3600_000).toISOString();
      res.setHeader('content-type', 'text/xml');
      res.end(`<AssumeRoleResponse xmlns="https://sts.amazonaws.com/doc/2011-06-15/"><AssumeRoleResult><Credentials>` +
        `<AccessKeyId>${S3_KEY}</AccessKeyId><SecretAccessKey>${S3_KEY}</SecretAccessKey><SessionToken>session-token-double</SessionToken>` +
        `<Expiration>${exp}</Expiration></Credentials></AssumeRoleResult></AssumeRoleResponse>`);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, calls,
    close: () => new Promise((r) => server.close(() => r())),
  };
}
