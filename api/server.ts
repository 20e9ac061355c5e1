// Starts the Koa app on an HTTP server (port 0 picks a free port) and closes it, open streams included.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type Koa from 'koa';

export async function startServer(app: Koa, port: number, host?: string): Promise<{ port: number; close(): Promise<void> }> {
  const server = createServer(app.callback());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => { server.off('error', reject); resolve(); });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve, reject) => {
      server.close((err) => (err ? reject(err) : resolve()));
      server.closeAllConnections(); // server-sent event streams would otherwise keep it open
    }),
  };
}
