// What every command of the CLI shares: the global options (server, credentials, output format, kubectl plugin
// settings), the API client they make, `key=value` argument parsing, and printing.
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import type { Command } from 'commander';
import { ApiClient } from './client.js';
import { CliError, usageError } from './errors.js';
import { kubeTarget, loadKubeConfig, portForward } from './kube.js';
import { outputFormat, render, type OutputFormat } from './output.js';

export interface GlobalOptions {
  server?: string; token?: string; user?: string; output?: string;
  kube?: boolean; kubeContext?: string; kubeNamespace?: string; kubeService?: string; kubePort?: string;
}

/** Undone when the program ends (the kubectl port-forward). */
const cleanups: (() => void)[] = [];
export const cleanup = (): void => { while (cleanups.length) cleanups.pop()!(); };

/** True when run as a kubectl plugin (`kubectl flowpilot`, the program named kubectl-flowpilot) or with --kube. */
export function kubeMode(opts: GlobalOptions, argv1 = process.argv[1] ?? ''): boolean {
  return !!opts.kube || basename(argv1).startsWith('kubectl-');
}

export function globals(cmd: Command): GlobalOptions {
  return cmd.optsWithGlobals() as GlobalOptions;
}

export function format(cmd: Command): OutputFormat {
  return outputFormat(globals(cmd).output);
}

/** Prints `value` in the chosen format (stdout). */
export function print(cmd: Command, value: unknown, tableText?: () => string): void {
  const text = render(format(cmd), value, tableText);
  if (text !== '') process.stdout.write(`${text}\n`);
}

/**
 * The API client of the command: --server / FLOWPILOT_URL (default http://localhost:8080), --token / FLOWPILOT_TOKEN or
 * --user / FLOWPILOT_USER; as a kubectl plugin without a server, a port-forward to the API Service of the current
 * context with that context's token.
 */
export async function connect(cmd: Command, env: NodeJS.ProcessEnv = process.env): Promise<ApiClient> {
  const o = globals(cmd);
  let server = o.server ?? env.FLOWPILOT_URL;
  let token = o.token ?? env.FLOWPILOT_TOKEN;
  const user = o.user ?? env.FLOWPILOT_USER;
  if (!server && kubeMode(o)) {
    const port = o.kubePort === undefined ? undefined : Number(o.kubePort);
    if (port !== undefined && !(Number.isInteger(port) && port > 0 && port < 65536)) throw usageError(`invalid --kube-port '${o.kubePort}': expected a port number`);
    const target = kubeTarget({ context: o.kubeContext, namespace: o.kubeNamespace, service: o.kubeService, port }, await loadKubeConfig());
    const forward = await portForward(target);
    cleanups.push(forward.close);
    server = forward.url;
    token ??= target.token;
    if (!token && !user) {
      throw new CliError(`the kubeconfig user of context ${target.context} has no bearer token, which the flowpilot API needs: give --token (e.g. $(kubectl create token <service account> -n ${target.namespace}))`, 7);
    }
  }
  return new ApiClient({ server: server ?? 'http://localhost:8080', token, user });
}

/** `key=value` pairs of a repeatable option, in order (a key may repeat). */
export function keyValues(items: string[] | undefined, option: string): [string, string][] {
  return (items ?? []).map((item) => {
    const at = item.indexOf('=');
    if (at <= 0) throw usageError(`invalid ${option} '${item}': expected key=value`);
    return [item.slice(0, at), item.slice(at + 1)];
  });
}

/** A repeatable option's collector for commander. */
export const collect = (value: string, previous: string[] = []): string[] => [...previous, value];

/** `--input k=v` and `k=@path` (a file part) as multipart form data; undefined when there is none. */
export function inputsForm(items: string[] | undefined): FormData | undefined {
  const pairs = keyValues(items, '--input');
  if (pairs.length === 0) return undefined;
  const form = new FormData();
  for (const [key, value] of pairs) {
    if (value.startsWith('@')) {
      const path = value.slice(1);
      let data: Buffer;
      try {
        data = readFileSync(path);
      } catch (err) {
        throw usageError(`--input ${key}: cannot read '${path}': ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`);
      }
      form.append(key, new Blob([new Uint8Array(data)]), basename(path));
    } else form.append(key, value);
  }
  return form;
}

/** `--input k=v` as a JSON object (values parsed as JSON when they are, else strings). */
export function inputsObject(items: string[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = Object.create(null);
  for (const [k, v] of keyValues(items, '--input')) {
    if (v.startsWith('@')) throw usageError(`--input ${k}: files (@path) are not accepted here`);
    try { out[k] = JSON.parse(v); } catch { out[k] = v; }
  }
  return out;
}

/** `--label k=v` as the API's `labels=k:v` query values. */
export const labelsQuery = (items: string[] | undefined): string[] => keyValues(items, '--label').map(([k, v]) => `${k}:${v}`);

/** A positive integer option. */
export function intOption(value: string | undefined, option: string): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw usageError(`invalid ${option} '${value}': expected a positive integer`);
  return n;
}

export const enc = encodeURIComponent;
