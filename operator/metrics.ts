// Prometheus metrics of the operator (prom-client): executions by state (read from a source the coordinator sets),
// task-run durations, reconcile durations and errors, queue depths; and a handler that serves them over HTTP.
import { type IncomingMessage, type ServerResponse, createServer } from 'node:http';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { type ExecutionState, ExecutionStates } from './core/types.js';
import { listen, type Listening } from './listen.js';

export type ExecutionCounts = Partial<Record<ExecutionState, number>>;

export interface OperatorMetrics {
  registry: Registry;
  /** Gauge `<prefix>executions{state}`, read from the source at each scrape. */
  executions: Gauge<'state'>;
  /** Histogram `<prefix>task_run_duration_seconds{task_type,state}`. */
  taskRunDuration: Histogram<'task_type' | 'state'>;
  /** Histogram `<prefix>reconcile_duration_seconds{kind}`. */
  reconcileDuration: Histogram<'kind'>;
  /** Counter `<prefix>reconcile_errors_total{kind}`. */
  reconcileErrors: Counter<'kind'>;
  /** Gauge `<prefix>queue_depth{queue}`. */
  queueDepth: Gauge<'queue'>;
  /** Where the executions gauge reads its counts (e.g. a count over the execution store or an informer cache). */
  setExecutionCountSource(source: () => ExecutionCounts | Promise<ExecutionCounts>): void;
  /** Records one finished task run. */
  observeTaskRun(taskType: string, state: string, seconds: number): void;
  /** Times a reconcile of `kind`, counting it as an error when it throws (the error is rethrown). */
  timeReconcile<T>(kind: string, reconcile: () => Promise<T>): Promise<T>;
  setQueueDepth(queue: string, depth: number): void;
}

export interface OperatorMetricsOptions {
  /** Registry to register in (default: a new one). */
  registry?: Registry;
  /** Metric name prefix (default `flowpilot_`). */
  prefix?: string;
  /** Also collect Node's process metrics (default true). */
  defaultMetrics?: boolean;
}

const TASK_BUCKETS = [0.05, 0.1, 0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800, 3600];
const RECONCILE_BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export function createOperatorMetrics(options: OperatorMetricsOptions = {}): OperatorMetrics {
  const registry = options.registry ?? new Registry();
  const prefix = options.prefix ?? 'flowpilot_';
  if (options.defaultMetrics ?? true) collectDefaultMetrics({ register: registry, prefix });
  let source: (() => ExecutionCounts | Promise<ExecutionCounts>) | undefined;

  const executions = new Gauge({
    name: `${prefix}executions`, help: 'Executions by current state', labelNames: ['state'] as const, registers: [registry],
    async collect() {
      if (!source) return;
      const counts = await source();
      for (const state of ExecutionStates) this.set({ state }, counts[state] ?? 0);
    },
  });
  const taskRunDuration = new Histogram({
    name: `${prefix}task_run_duration_seconds`, help: 'Duration of finished task runs', labelNames: ['task_type', 'state'] as const,
    buckets: TASK_BUCKETS, registers: [registry],
  });
  const reconcileDuration = new Histogram({
    name: `${prefix}reconcile_duration_seconds`, help: 'Duration of reconciles', labelNames: ['kind'] as const,
    buckets: RECONCILE_BUCKETS, registers: [registry],
  });
  const reconcileErrors = new Counter({
    name: `${prefix}reconcile_errors_total`, help: 'Reconciles that failed', labelNames: ['kind'] as const, registers: [registry],
  });
  const queueDepth = new Gauge({
    name: `${prefix}queue_depth`, help: 'Items waiting in a work queue', labelNames: ['queue'] as const, registers: [registry],
  });

  return {
    registry, executions, taskRunDuration, reconcileDuration, reconcileErrors, queueDepth,
    setExecutionCountSource(next) { source = next; },
    observeTaskRun(taskType, state, seconds) { taskRunDuration.observe({ task_type: taskType, state }, Math.max(0, seconds)); },
    async timeReconcile(kind, reconcile) {
      const end = reconcileDuration.startTimer({ kind });
      try {
        return await reconcile();
      } catch (err) {
        reconcileErrors.inc({ kind });
        throw err;
      } finally {
        end();
      }
    },
    setQueueDepth(queue, depth) { queueDepth.set({ queue }, depth); },
  };
}

/** The registry's metrics in the Prometheus text format, with its content type (for a Koa route: ctx.type/ctx.body). */
export async function metricsText(registry: Registry): Promise<{ contentType: string; body: string }> {
  return { contentType: registry.contentType, body: await registry.metrics() };
}

/** A Node HTTP handler answering `GET /metrics` (and 404 elsewhere). */
export function metricsHandler(registry: Registry): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (req.method !== 'GET' || path !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
      return;
    }
    metricsText(registry).then(
      ({ contentType, body }) => res.writeHead(200, { 'content-type': contentType }).end(body),
      (err: Error) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`metrics collection failed: ${err.message}\n`),
    );
  };
}

/**
 * Serves `/metrics` (and `/healthz` when `health` is given) on its own small HTTP server (port 0 picks a free port).
 */
export async function serveMetrics(
  registry: Registry, port = 0, host = '0.0.0.0', health?: () => Record<string, unknown>,
): Promise<Listening & { url: string }> {
  const metrics = metricsHandler(registry);
  const server = createServer((req, res) => {
    if (health && (req.url ?? '').split('?')[0] === '/healthz') {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(health()));
    } else metrics(req, res);
  });
  const listening = await listen(server, port, host);
  const shown = host === '0.0.0.0' ? '127.0.0.1' : host;
  return { ...listening, url: `http://${shown}:${listening.port}/metrics` };
}
