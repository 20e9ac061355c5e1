// Test support: an HTTP proxy in front of the Kubernetes API test server that injects faults: chosen requests are
// answered with an error status (a Kubernetes Status body) or have their connection reset; everything else, watch
// streams included, is piped through unchanged. Clients use it through `kubeConfig(server)`.
import { createServer, request, type Server } from 'node:http';
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
  /** Requests answered with a fault so far. */
  readonly injected: number;
  close(): Promise<void>;
}

export async function startFaultProxy(target: string): Promise<FaultProxy> {
  const rules: FaultRule[] = [];
  const sockets = new Set<Socket>();
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
    const out = request({ host: up.hostname, port: up.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      res.flushHeaders(); // a watch answers its headers before any event
      answer.pipe(res);
    });
    out.on('error', () => res.destroy());
    res.on('close', () => out.destroy());
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
    get injected() { return injected; },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((r) => server.close(r));
    },
  };
}
