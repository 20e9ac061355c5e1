// Test support: an HTTP proxy in front of the Kubernetes API test server that injects faults: chosen requests are
// answered with an error status (a Kubernetes Status body) or have their connection reset; everything else, watch
// streams included, is piped through unchanged. Clients use it through `kubeConfig(server)`. `cutStreams` ends answers
// still in progress (a watch, a server-sent-event stream), cleanly or by resetting the connection.
import { createServer, request, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';

export interface FaultRule {
  method?: string;
  path: RegExp;
  /** HTTP status to answer, or 'reset' to destroy the connection without an answer. */
  fault: number | 'reset';
  /** How many matching requests fail (Infinity: until cleared). */
  times: number;
}

export interface FaultProxy {
  url: string;
  /** A KubeConfig like `from`'s (its user and token) that goes through the proxy. */
  kubeConfig(from: KubeConfig): KubeConfig;
  fail(rule: FaultRule): void;
  clear(): void;
  /**
   * Ends the answers in progress whose request path matches: `end` finishes them as a complete answer (as a proxy's
   * timeout or an early end by the server would), `reset` destroys the client's connection. Returns how many.
   */
  cutStreams(path: RegExp, how: 'end' | 'reset'): number;
  /** Requests answered with a fault so far. */
  readonly injected: number;
  close(): Promise<void>;
}

export async function startFaultProxy(target: string): Promise<FaultProxy> {
  const rules: FaultRule[] = [];
  const sockets = new Set<Socket>();
  const open = new Set<{ path: string; cut(how: 'end' | 'reset'): void }>();
  let injected = 0;
  const up = new URL(target);
  const server: Server = createServer((req, res) => {
    const rule = rules.find((r) => r.times > 0 && (!r.method || r.method === req.method) && r.path.test(req.url ?? ''));
    if (rule) {
      rule.times--;
      injected++;
      req.resume();
      if (rule.fault === 'reset') { req.socket.destroy(); return; }
      const body = JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', message: `injected fault ${rule.fault}`, reason: 'ServiceUnavailable', code: rule.fault });
      res.writeHead(rule.fault, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) });
      res.end(body);
      return;
    }
    let answered: IncomingMessage | undefined;
    let ended = false;
    const out = request({ host: up.hostname, port: up.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      answered = answer;
      answer.on('error', () => undefined); // cut by `cutStreams`: the client's side is ended or reset there
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      res.flushHeaders(); // a watch answers its headers before any event
      answer.pipe(res);
    });
    const entry = {
      path: req.url ?? '',
      cut(how: 'end' | 'reset') {
        if (how === 'reset') { req.socket.destroy(); return; }
        ended = true;
        answered?.unpipe(res);
        res.end();
        out.destroy();
      },
    };
    open.add(entry);
    out.on('error', () => { if (!ended) res.destroy(); });
    res.on('close', () => { open.delete(entry); out.destroy(); });
    req.pipe(out);
  });
  server.on('connection', (s) => { sockets.add(s); s.on('close', () => sockets.delete(s)); });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    kubeConfig(from) {
      const kc = new KubeConfig();
      kc.loadFromOptions({
        clusters: [{ name: 'proxy', server: url, skipTLSVerify: true }],
        users: [{ name: 'proxy', token: from.getCurrentUser()?.token ?? 'test-token' }],
        contexts: [{ name: 'proxy', cluster: 'proxy', user: 'proxy', namespace: 'default' }],
        currentContext: 'proxy',
      });
      return kc;
    },
    fail(rule) { rules.push(rule); },
    clear() { rules.length = 0; },
    cutStreams(path, how) {
      const cut = [...open].filter((e) => path.test(e.path));
      for (const e of cut) { open.delete(e); e.cut(how); }
      return cut.length;
    },
    get injected() { return injected; },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}
