// Starts the Koa app on an HTTP server (port 0 picks a free port) and closes it, open streams included.
import { createServer } from 'node:http';
import type Koa from 'koa';
import { listen, type Listening } from '../operator/listen.js';

export type { Listening };

export function startServer(app: Koa, port: number, host?: string): Promise<Listening> {
  return listen(createServer(app.callback()), port, host);
}
