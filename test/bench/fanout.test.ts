// The fan-out bench's watcher (fanout.ts `watch`): /healthz probes and RSS samples from a worker thread, so a block of
// the bench's own thread (its parse of a large answer) is not counted as the server's. No timing is asserted.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { watch } from './fanout.js';

describe('watch', () => {
  it('probes the URL and samples the RSS of the process until stopped, also while this thread is blocked', async () => {
    let probes = 0;
    const server = createServer((_, res) => { probes++; res.end('ok'); });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const stop = await watch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/healthz`, process.pid);
      while (probes < 3) await new Promise((r) => setTimeout(r, 10));
      const seen = probes;
      const blockedUntil = Date.now() + 200;
      while (Date.now() < blockedUntil); // this thread blocked: the worker goes on (its probes are answered after)
      const w = await stop();
      expect(w.failedProbes).toBe(0);
      expect(w.worst).toBeGreaterThan(0);
      expect(w.startRss).toBeGreaterThan(0);
      expect(w.peakRss).toBeGreaterThanOrEqual(w.startRss);
      expect(probes).toBeGreaterThanOrEqual(seen);
    } finally {
      await new Promise((r) => server.close(r));
    }
  });
});
