// Schedule benchmark: a Schedule trigger firing every second (`withSeconds`), run by the embedded scheduler with the
// real clock and the real controller; the delay from each due date (`trigger.date`) to its execution's creation and to
// its start (RUNNING). Printed beside Kestra's figure (< 1 s latency), never asserted.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startController } from '../../operator/controller/index.js';
import { createSecretRenderer } from '../../operator/controller/secrets.js';
import { initExpressions } from '../../operator/expr/index.js';
import { parseFlow } from '../../operator/model/index.js';
import { openEmbeddedStores } from '../../operator/store/sqlite/index.js';
import { startTriggerService } from '../../operator/triggers/service.js';

const FLOW = `id: every-second
namespace: bench
tasks:
  - id: log
    type: ai.service.plugin.core.log.Log
    message: "scheduled for {{ trigger.date }}"
triggers:
  - id: tick
    type: ai.service.plugin.core.trigger.Schedule
    cron: "* * * * * *"
    withSeconds: true
`;

export async function runScheduleBench(): Promise<void> {
  const seconds = Number(process.env.BENCH_SCHEDULE_SECONDS ?? 15);
  await initExpressions();
  const dir = mkdtempSync(join(tmpdir(), 'bench-schedule-'));
  const stores = openEmbeddedStores(dir);
  const controller = await startController(stores, { dataDir: dir });
  const triggers = await startTriggerService({
    stores, renderer: createSecretRenderer(stores, {}), clock: () => new Date(), env: { TRIGGER_RECOVER_MISSED_SCHEDULES: 'NONE' },
    onError: (err, where) => console.error(`[triggers] ${where}:`, err),
  });
  try {
    await stores.flows.save(parseFlow(FLOW), FLOW);
    await new Promise((r) => setTimeout(r, seconds * 1000));
    await triggers.stop();
    await controller.whenIdle();
    const execs = (await stores.executions.search({ namespace: 'bench', flowId: 'every-second', limit: 10_000 })).results;
    const rows = execs.map((e) => {
      const due = Date.parse(String(e.trigger?.variables?.date));
      const at = (s: string) => { const h = e.state.histories.find((x) => x.state === s); return h ? Date.parse(h.date) - due : NaN; };
      return { created: at('CREATED'), running: at('RUNNING') };
    }).filter((r) => Number.isFinite(r.created));
    const q = (xs: number[], p: number) => { const s = xs.filter(Number.isFinite).sort((a, b) => a - b); return s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? NaN; };
    const created = rows.map((r) => r.created), running = rows.map((r) => r.running);
    console.log(`\nschedule: cron every second for ${seconds} s (embedded, real clock): ${rows.length} executions`);
    console.log(`  due → created   median ${q(created, 0.5)} ms, p99 ${q(created, 0.99)} ms, max ${Math.max(...created)} ms`);
    console.log(`  due → RUNNING   median ${q(running, 0.5)} ms, p99 ${q(running, 0.99)} ms (Kestra publishes < 1 s)`);
  } finally {
    await triggers.stop().catch(() => undefined);
    await controller.stop();
    await stores.close();
    rmSync(dir, { recursive: true, force: true });
  }
}
