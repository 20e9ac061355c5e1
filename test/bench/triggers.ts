// Trigger benchmark: Redis list realtime trigger → durably created executions (embedded SQLite store, real
// redis-server). Burst: N items pushed at once, events/s until all N executions exist. Steady: items pushed at
// Kestra's published rate (1,500/min) and the push-to-created latency (median, p99). Printed, never asserted.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { createSecretRenderer } from '../../operator/controller/secrets.js';
import { parseFlow } from '../../operator/model/index.js';
import { openEmbeddedStores } from '../../operator/store/sqlite/index.js';
import { pollingAndRealtimeComponent } from '../../operator/triggers/runtime.js';
import { startRedis } from '../support/services.js';

const KESTRA_PER_MIN = 1500; // Kestra's published figure: ~1,500 executions/minute at < 1 s latency on 4 vCPU

const flow = (id: string, url: string, key: string) => `id: ${id}
namespace: bench
tasks:
  - id: log
    type: ai.service.plugin.core.log.Log
    message: "{{ trigger.value }}"
triggers:
  - id: queue
    type: ai.service.plugin.redis.list.RealtimeTrigger
    url: ${url}
    key: ${key}
    serdeType: JSON
`;

export async function runTriggersBench(): Promise<void> {
  const n = Number(process.env.BENCH_TRIGGER_EVENTS ?? 5000);
  const dir = mkdtempSync(join(tmpdir(), 'bench-triggers-'));
  const redis = await startRedis();
  const stores = openEmbeddedStores(dir);
  const client = new Redis(redis.url);
  const quiet = { info: () => {}, warn: (m: string) => console.warn(m), error: (m: string) => console.error(m) };
  const component = pollingAndRealtimeComponent({ logger: quiet });
  await component.start({ stores, renderer: createSecretRenderer(stores, {}), clock: () => new Date(), env: {}, onError: (e) => console.error(e) });
  const created = (flowId: string) => stores.executions.count('bench', flowId, ['CREATED']);
  const waitCount = async (flowId: string, total: number) => {
    while ((await created(flowId)) < total) await new Promise((r) => setTimeout(r, 20));
  };
  const save = async (id: string, key: string) => {
    const src = flow(id, redis.url, key);
    await stores.flows.save(parseFlow(src), src);
    while (!component.running().includes(`bench/${id}/queue`)) await new Promise((r) => setTimeout(r, 20));
  };
  try {
    // Warm-up.
    await save('warm', 'warm');
    await client.rpush('warm', ...Array.from({ length: 200 }, (_, i) => JSON.stringify({ i })));
    await waitCount('warm', 200);

    // Burst: N items at once.
    await save('burst', 'burst');
    const t0 = Date.now();
    for (let i = 0; i < n; i += 1000) await client.rpush('burst', ...Array.from({ length: Math.min(1000, n - i) }, (_, j) => JSON.stringify({ i: i + j })));
    await waitCount('burst', n);
    const burstRate = n / ((Date.now() - t0) / 1000);

    // Steady: Kestra's rate for 10 s, latency from push to durable create.
    await save('steady', 'steady');
    const perSec = KESTRA_PER_MIN / 60;
    const steadyN = Number(process.env.BENCH_TRIGGER_STEADY ?? 250);
    const start = Date.now();
    for (let i = 0; i < steadyN; i++) {
      const due = start + (i * 1000) / perSec;
      if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
      await client.rpush('steady', JSON.stringify({ pushedAt: Date.now() }));
    }
    await waitCount('steady', steadyN);
    const execs = (await stores.executions.search({ namespace: 'bench', flowId: 'steady', limit: steadyN })).results;
    const lat = execs.map((e) => Date.parse(e.state.histories[0]!.date) - (e.trigger!.variables!.value as { pushedAt: number }).pushedAt).sort((a, b) => a - b);
    const q = (p: number) => lat[Math.min(lat.length - 1, Math.floor(p * lat.length))]!;

    console.log(`triggers: Redis list realtime trigger → durably created executions (embedded SQLite, one process)`);
    console.log(`  burst of ${n} items     ${burstRate.toFixed(0)} events/s = ${(burstRate * 60).toFixed(0)} executions/min`);
    console.log(`  vs Kestra 1,500/min     ${((burstRate * 60) / KESTRA_PER_MIN).toFixed(1)}x (Kestra: ~1,500 executions/min at < 1 s latency, 4 vCPU)`);
    console.log(`  steady ${perSec.toFixed(0)}/s for ${(steadyN / perSec).toFixed(0)} s   push→created latency median ${q(0.5)} ms, p99 ${q(0.99)} ms`);
  } finally {
    await component.stop();
    client.disconnect();
    await stores.close();
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
