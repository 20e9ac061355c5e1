// A local OpenAI-compatible model server for tests (real HTTP on port 0) whose answers the test scripts: it can answer
// 429 with Retry-After, 500, malformed bodies, drop the connection, hold a request until released, or answer a fixed
// text. Every request body is recorded so tests count attempts and read seeds/temperatures.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type Reply =
  | { kind: 'ok'; text: string }
  | { kind: 'status'; status: number; body?: string; retryAfter?: string }
  | { kind: 'malformed'; body: string }
  | { kind: 'drop' }
  | { kind: 'hold' };

/** The user message of a recorded chat request (the prompt: question, blank line, input). */
export const promptOf = (body: Record<string, unknown>): string =>
  ((body.messages as { role: string; content: string }[]).find((m) => m.role === 'user')?.content ?? '');

export interface ModelServer {
  url: string;
  /** Request bodies of POST /chat/completions, in arrival order. */
  requests: Record<string, unknown>[];
  /** Decides the reply of the n-th (0-based) chat request; default: ok with the prompt echoed. */
  reply: (n: number, body: Record<string, unknown>) => Reply;
  /** Answers every held request with ok. */
  release(): void;
  held(): number;
  close(): Promise<void>;
}

const completion = (text: string): string => JSON.stringify({
  id: 'x', object: 'chat.completion', choices: [{ index: 0, message: { role: 'assistant', content: text }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 3, completion_tokens: 2 },
});

export async function startModelServer(): Promise<ModelServer> {
  const holds: ServerResponse[] = [];
  const s: Partial<ModelServer> = { requests: [] };
  s.reply = () => ({ kind: 'ok', text: 'fine' });
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (req.method === 'GET' && req.url?.endsWith('/models')) {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ object: 'list', data: [{ id: 'served', object: 'model' }] }));
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8') || '{}') as Record<string, unknown>;
      const n = s.requests!.length;
      s.requests!.push(body);
      const r = s.reply!(n, body);
      if (r.kind === 'ok') { res.setHeader('content-type', 'application/json'); res.end(completion(r.text)); }
      else if (r.kind === 'status') {
        if (r.retryAfter) res.setHeader('retry-after', r.retryAfter);
        res.statusCode = r.status;
        res.end(r.body ?? '{"error":{"message":"scripted failure"}}');
      } else if (r.kind === 'malformed') res.end(r.body);
      else if (r.kind === 'drop') req.socket.destroy();
      else holds.push(res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return Object.assign(s, {
    url: `http://127.0.0.1:${port}/v1`,
    release() { for (const res of holds.splice(0)) { res.setHeader('content-type', 'application/json'); res.end(completion('released')); } },
    held: () => holds.length,
    async close() {
      for (const res of holds.splice(0)) res.destroy();
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  }) as ModelServer;
}

/** A port nothing listens on (bound, then closed). */
export async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise((r) => server.close(r));
  return port;
}
