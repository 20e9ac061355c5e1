// Listening and closing for every HTTP(S) server of the project (API, admission webhook, operator metrics): port 0
// picks a free port, and close() also ends kept-alive and streaming connections.
import type { Server } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';

export interface Listening { port: number; close(): Promise<void> }

/** `onClose` runs first when closing (e.g. to stop a timer tied to the server). */
export async function listen(server: Server | HttpsServer, port: number, host?: string, onClose?: () => void): Promise<Listening> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => { server.off('error', reject); resolve(); });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve, reject) => {
      onClose?.();
      server.close((err) => (err ? reject(err) : resolve()));
      server.closeAllConnections(); // server-sent event streams would otherwise keep it open
    }),
  };
}
