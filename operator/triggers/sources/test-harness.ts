// Test support for the trigger sources: embedded stores in a temp dir, the plugin-trigger component started with a
// collecting logger, flows saved from YAML (validated like the API does), polling helpers, and restarting a Debian
// service on the same port (to test reconnects).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSecretRenderer } from '../../controller/secrets.js';
import type { Execution } from '../../core/types.js';
import { parseFlow } from '../../model/index.js';
import { openEmbeddedStores, type EmbeddedStores } from '../../store/sqlite/index.js';
import { pollingAndRealtimeComponent, type PluginTriggerComponent, type RuntimeOptions } from '../runtime.js';
import type { TriggerServiceDeps } from '../types.js';

export interface Harness {
  stores: EmbeddedStores;
  deps: TriggerServiceDeps;
  component: PluginTriggerComponent;
  logs: string[];
  dir: string;
  save(yaml: string): Promise<void>;
  executions(flowId?: string): Promise<Execution[]>;
  /** Stops the component (like a crash of the trigger service: nothing is flushed at the sources). */
  stopComponent(): Promise<void>;
  /** Starts a fresh component on the same stores (a restarted service). */
  restartComponent(opts?: RuntimeOptions): Promise<void>;
  close(): Promise<void>;
}

export async function startHarness(opts: RuntimeOptions & { env?: NodeJS.ProcessEnv } = {}): Promise<Harness> {
  const dir = mkdtempSync(join(tmpdir(), 'plugin-triggers-'));
  const stores = openEmbeddedStores(dir);
  const logs: string[] = [];
  const logger = { info: (m: string) => logs.push(`INFO ${m}`), warn: (m: string) => logs.push(`WARN ${m}`), error: (m: string) => logs.push(`ERROR ${m}`) };
  const deps: TriggerServiceDeps = {
    stores,
    renderer: createSecretRenderer(stores, opts.env ?? {}),
    clock: () => new Date(),
    env: opts.env ?? {},
    onError: (err, where) => logs.push(`ONERROR ${where} ${String(err)}`),
  };
  let component = pollingAndRealtimeComponent({ logger, resyncMs: 500, ...opts });
  await component.start(deps);
  const h: Harness = {
    stores, deps, logs, dir,
    get component() { return component; },
    async save(yaml) { await stores.flows.save(parseFlow(yaml), yaml); },
    async executions(flowId) {
      return (await stores.executions.search({ ...(flowId ? { flowId } : {}), limit: 100_000 })).results;
    },
    async stopComponent() { await component.stop(); },
    async restartComponent(more = {}) {
      await component.stop();
      component = pollingAndRealtimeComponent({ logger, resyncMs: 500, ...more });
      await component.start(deps);
    },
    async close() {
      await component.stop();
      await stores.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return h;
}

/** Polls `check` until it returns a truthy value (generous timeout; no timing assertions). */
export async function waitFor<T>(check: () => Promise<T | false | undefined | null> | T | false | undefined | null, what: string, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const v = await check();
      if (v) return v;
    } catch (err) { last = err; }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
}

/** A flow YAML with one trigger (given as YAML lines under `triggers:`). */
export function flowYaml(id: string, trigger: string, extra = ''): string {
  const body = trigger.trim().split('\n').map((l, i) => (i === 0 ? `  - ${l}` : `    ${l}`)).join('\n');
  return `id: ${id}\nnamespace: company.team\n${extra}tasks:\n  - id: log\n    type: ai.service.plugin.core.log.Log\n    message: hi\ntriggers:\n${body}\n`;
}

/** A service process restartable on a fixed port (Redis, Mosquitto, NATS from Debian). */
export interface PortService { port: number; stop(): Promise<void>; start(): Promise<void> }

async function listening(port: number, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const ok = await new Promise<boolean>((res) => {
      const c = connect(port, '127.0.0.1', () => { c.end(); res(true); });
      c.once('error', () => res(false));
    });
    if (ok) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`nothing listens on ${port}`);
}

export function portService(cmd: string, args: (port: number, dir: string) => string[], port: number, prepare?: (dir: string) => void): PortService {
  let proc: ChildProcess | undefined;
  let dir: string | undefined;
  return {
    port,
    async start() {
      dir = mkdtempSync(join(tmpdir(), 'svc-'));
      prepare?.(dir);
      proc = spawn(cmd, args(port, dir), { cwd: dir, stdio: 'ignore' });
      await listening(port);
    },
    async stop() {
      if (proc && proc.exitCode === null) {
        const exited = new Promise((r) => proc!.once('exit', r));
        proc.kill('SIGKILL');
        await exited;
      }
      if (dir) rmSync(dir, { recursive: true, force: true });
    },
  };
}
