// HTTPS server of the Flow admission webhook (cluster mode): started by api/kube-main.ts when
// ADMISSION_TLS_CERT_FILE and ADMISSION_TLS_KEY_FILE are set, on ADMISSION_PORT (8443), serving only /admission/flows.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { createAdmissionApp, type AdmissionOptions } from './admission.js';

export interface AdmissionServer { port: number; close(): Promise<void> }

/** Starts the webhook server, or returns undefined when the TLS files are not configured. */
export async function startAdmissionServer(env: NodeJS.ProcessEnv, opts: AdmissionOptions = {}, host?: string): Promise<AdmissionServer | undefined> {
  const certFile = env.ADMISSION_TLS_CERT_FILE;
  const keyFile = env.ADMISSION_TLS_KEY_FILE;
  if (!certFile || !keyFile) return undefined;
  const port = Number(env.ADMISSION_PORT || 8443);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`ADMISSION_PORT must be a port number, got '${env.ADMISSION_PORT}'`);
  const server = createServer({ cert: readFileSync(certFile), key: readFileSync(keyFile) }, createAdmissionApp(opts).callback());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => { server.off('error', reject); resolve(); });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve, reject) => {
      server.close((err) => (err ? reject(err) : resolve()));
      server.closeAllConnections();
    }),
  };
}
