// Operator metrics scraped over real HTTP: executions by state from the caller's source, task-run and reconcile
// histograms, reconcile errors, queue depth, and the 404 for other paths.
import { afterEach, describe, expect, it } from 'vitest';
import { createOperatorMetrics, serveMetrics } from './metrics.js';

const servers: { close(): Promise<void> }[] = [];
afterEach(async () => { for (const s of servers.splice(0)) await s.close(); });

async function serve(m: ReturnType<typeof createOperatorMetrics>): Promise<string> {
  const server = await serveMetrics(m.registry, 0, '127.0.0.1');
  servers.push(server);
  return server.url;
}

async function scrape(m: ReturnType<typeof createOperatorMetrics>): Promise<{ status: number; type: string | null; text: string }> {
  const res = await fetch(await serve(m));
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
}

const value = (text: string, series: string): number | undefined => {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
};

describe('operator metrics', () => {
  it('reads execution counts from the source at scrape time, every state present', async () => {
    const m = createOperatorMetrics({ defaultMetrics: false });
    let running = 3;
    m.setExecutionCountSource(async () => ({ RUNNING: running, SUCCESS: 10 }));
    let page = await scrape(m);
    expect(page.status).toBe(200);
    expect(page.type).toContain('text/plain');
    expect(value(page.text, 'flowpilot_executions{state="RUNNING"}')).toBe(3);
    expect(value(page.text, 'flowpilot_executions{state="SUCCESS"}')).toBe(10);
    expect(value(page.text, 'flowpilot_executions{state="FAILED"}')).toBe(0);
    running = 1;
    page = await scrape(m);
    expect(value(page.text, 'flowpilot_executions{state="RUNNING"}')).toBe(1);
  });

  it('records task runs, reconciles (and their errors) and queue depth', async () => {
    const m = createOperatorMetrics({ prefix: 'fp_', defaultMetrics: false });
    m.observeTaskRun('ai.service.plugin.core.log.Log', 'SUCCESS', 0.3);
    m.observeTaskRun('ai.service.plugin.core.log.Log', 'SUCCESS', 42);
    expect(await m.timeReconcile('Execution', async () => 'done')).toBe('done');
    await expect(m.timeReconcile('Execution', async () => { throw new Error('conflict'); })).rejects.toThrow('conflict');
    m.setQueueDepth('executions', 7);
    const { text } = await scrape(m);
    const task = 'task_type="ai.service.plugin.core.log.Log",state="SUCCESS"';
    expect(value(text, `fp_task_run_duration_seconds_count{${task}}`)).toBe(2);
    expect(value(text, `fp_task_run_duration_seconds_bucket{le="0.5",${task}}`)).toBe(1);
    expect(value(text, `fp_task_run_duration_seconds_sum{${task}}`)).toBeCloseTo(42.3);
    expect(value(text, 'fp_reconcile_duration_seconds_count{kind="Execution"}')).toBe(2);
    expect(value(text, 'fp_reconcile_errors_total{kind="Execution"}')).toBe(1);
    expect(value(text, 'fp_queue_depth{queue="executions"}')).toBe(7);
  });

  it('includes process metrics by default and answers 404 elsewhere', async () => {
    const m = createOperatorMetrics();
    const { text } = await scrape(m);
    expect(text).toMatch(/^flowpilot_process_cpu_user_seconds_total /m);
    const res = await fetch(new URL('/other', await serve(m)));
    expect(res.status).toBe(404);
  });
});
