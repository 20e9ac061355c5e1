// HTTPS server of the Flow admission webhook (cluster mode): started by api/kube-main.ts when
// ADMISSION_TLS_CERT_FILE and ADMISSION_TLS_KEY_FILE are set, on ADMISSION_PORT (8443), serving only /admission/flows.
// The files are re-read periodically: a renewed Secret (new certificate and caBundle) is served without a restart.
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import { validateFlow } from '../operator/model/index.js';
import { createAdmissionApp, type AdmissionOptions } from './admission.js';
import { listen, type Listening } from '../operator/listen.js';

export type AdmissionServer = Listening;

/** Starts the webhook server, or returns undefined when the TLS files are not configured. */
export async function startAdmissionServer(
  env: NodeJS.ProcessEnv, opts: AdmissionOptions & { reloadIntervalMs?: number } = {}, host?: string,
): Promise<AdmissionServer | undefined> {
  const certFile = env.ADMISSION_TLS_CERT_FILE;
  const keyFile = env.ADMISSION_TLS_KEY_FILE;
  if (!certFile || !keyFile) return undefined;
  const port = Number(env.ADMISSION_PORT || 8443);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error(`ADMISSION_PORT must be a port number, got '${env.ADMISSION_PORT}'`);
  // Compile the flow schema now: the first review would otherwise spend ~1 s of the API server's 5 s timeout on it.
  try { validateFlow({ id: 'warm-up', namespace: 'warm.up', tasks: [] }); } catch { /* invalid on purpose */ }
  let cert = readFileSync(certFile);
  let key = readFileSync(keyFile);
  const server = createServer({ cert, key }, createAdmissionApp(opts).callback());
  const reload = setInterval(() => {
    try {
      const [c, k] = [readFileSync(certFile), readFileSync(keyFile)];
      if (c.equals(cert) && k.equals(key)) return;
      server.setSecureContext({ cert: c, key: k }); // throws on a mismatched pair (mid-update): retried next time
      [cert, key] = [c, k];
      console.log('[api] admission webhook certificate reloaded');
    } catch (err) {
      console.error(`[api] admission webhook certificate not reloaded: ${(err as Error).message}`);
    }
  }, opts.reloadIntervalMs ?? 60_000);
  reload.unref();
  try {
    return await listen(server, port, host, () => clearInterval(reload));
  } catch (err) {
    clearInterval(reload);
    throw err;
  }
}
