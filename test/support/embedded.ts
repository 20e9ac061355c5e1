// Test support: the whole embedded service in-process: the API test harness (real SQLite stores in a temp dir,
// Koa API on a random port) plus the controller, with small fetch helpers.
import { createSecretRenderer, startController, type Controller } from '../../operator/controller/index.js';
import { initExpressions } from '../../operator/expr/index.js';
import { loadPluginPackages } from '../../operator/plugins/load.js';
import type { EmbeddedStores } from '../../operator/store/sqlite/index.js';
import { startTestApi } from '../api/helpers.js';

export interface Embedded {
  base: string;
  stores: EmbeddedStores;
  controller: Controller;
  dataDir: string;
  json(path: string, init?: RequestInit): Promise<{ status: number; body: any }>;
  createFlow(yaml: string): Promise<any>;
  execute(namespace: string, flowId: string, how?: 'create' | 'trigger', inputs?: Record<string, unknown>): Promise<any>;
  waitFor(id: string, pred: (e: any) => boolean, timeoutMs?: number): Promise<any>;
  /** Saves the flow, executes it and waits for its end: the execution and its task runs by task id (last run wins). */
  runFlow(yaml: string, timeoutMs?: number): Promise<{ execution: any; runs: Record<string, any> }>;
  close(): Promise<void>;
}

export async function startEmbedded(env: NodeJS.ProcessEnv = { PATH: process.env.PATH }): Promise<Embedded> {
  await initExpressions();
  await loadPluginPackages(env); // as embedded main: PLUGINS packages register their task types first
  // Composed as embedded main: webhooks render their inputs with the same secrets as the controller,
  // and the API's creations are admitted by the controller (eager start), started below, before any request.
  let admitting: Controller | undefined;
  const api = await startTestApi({
    env,
    withStores: (stores) => ({
      renderer: createSecretRenderer(stores, env),
      admit: (e) => (admitting ? admitting.admit(e) : stores.executions.create(e).then((s) => s.execution)),
    }),
  });
  const { stores, dataDir } = api;
  const controller = await startController(stores, { dataDir, env });
  admitting = controller;
  const base = `${api.url}/api/v1`;
  const json = async (path: string, init?: RequestInit) => {
    const res = await fetch(`${base}${path}`, init);
    const text = await res.text();
    let body: unknown = text;
    try { body = text ? JSON.parse(text) : undefined; } catch { /* text */ }
    return { status: res.status, body: body as any };
  };
  const e: Embedded = {
    base, stores, controller, dataDir, json,
    async createFlow(yaml) {
      const r = await json('/flows', { method: 'POST', headers: { 'Content-Type': 'application/x-yaml' }, body: yaml });
      if (r.status >= 300) throw new Error(`createFlow: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body;
    },
    async execute(namespace, flowId, how = 'create', inputs = {}) {
      const path = how === 'trigger' ? `/executions/trigger/${namespace}/${flowId}` : `/executions/${namespace}/${flowId}`;
      const r = await json(path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(inputs) });
      if (r.status >= 300) throw new Error(`execute: ${r.status} ${JSON.stringify(r.body)}`);
      return r.body;
    },
    async waitFor(id, pred, timeoutMs = 20_000) {
      const end = Date.now() + timeoutMs;
      for (;;) {
        const { body } = await json(`/executions/${id}`);
        if (pred(body)) return body;
        if (Date.now() > end) throw new Error(`timed out waiting on ${id}: ${JSON.stringify(body?.state)}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async runFlow(yaml, timeoutMs = 30_000) {
      const flow = await e.createFlow(yaml);
      const started = await e.execute(flow.namespace, flow.id);
      const execution = await e.waitFor(started.id, (x) => ['SUCCESS', 'FAILED', 'WARNING', 'KILLED'].includes(x?.state?.current), timeoutMs);
      return { execution, runs: Object.fromEntries(execution.taskRunList.map((r: any) => [r.taskId, r])) };
    },
    async close() {
      await controller.stop();
      await api.close();
    },
  };
  return e;
}
