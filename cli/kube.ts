// The kubectl plugin's way to the in-cluster API (`kubectl flowpilot ...`, the same program installed as
// kubectl-flowpilot): the current kubeconfig context gives the Kubernetes namespace and the bearer token, and
// `kubectl port-forward` to the API Service gives a local URL. The API checks the token itself (TokenReview), so the
// token travels to it directly: the Kubernetes API server's service proxy would drop it.
import { spawn, type ChildProcess } from 'node:child_process';
import type { KubeConfig } from '@kubernetes/client-node';
import { CliError, ExitCodes } from './errors.js';

export interface KubeOptions {
  context?: string;
  /** Kubernetes namespace of the flowpilot release (default: the context's, else `flowpilot`). */
  namespace?: string;
  /** The API Service (default `flowpilot-api`, the chart's name for a release called flowpilot) and its port. */
  service?: string;
  port?: number;
}

export interface KubeTarget { context: string; namespace: string; service: string; port: number; token?: string }

/** Where the API is and who we are, from the kubeconfig (loadKubeConfig) and the options. */
export function kubeTarget(opts: KubeOptions, kc: KubeConfig): KubeTarget {
  const contextName = opts.context ?? kc.getCurrentContext();
  const context = kc.getContextObject(contextName);
  if (!context) throw new CliError(`kubeconfig has no context '${contextName || '(none)'}': pick one with --context or 'kubectl config use-context'`, ExitCodes.USAGE);
  const user = kc.getUser(context.user);
  return {
    context: context.name,
    namespace: opts.namespace ?? context.namespace ?? 'flowpilot',
    service: opts.service ?? 'flowpilot-api',
    port: opts.port ?? 8080,
    token: user?.token || undefined,
  };
}

/** The kubeconfig (KUBECONFIG or ~/.kube/config). The client library loads here, not at start: it is the CLI's heaviest
 *  dependency (~800 modules) and only the kubectl plugin mode needs it. */
export async function loadKubeConfig(): Promise<KubeConfig> {
  const { KubeConfig } = await import('@kubernetes/client-node');
  const kc = new KubeConfig();
  try {
    kc.loadFromDefault();
  } catch (err) {
    throw new CliError(`cannot read the kubeconfig: ${(err as Error).message}. Set KUBECONFIG or give --server`, ExitCodes.USAGE);
  }
  return kc;
}

export interface PortForward { url: string; close(): void }

/** Runs `kubectl port-forward svc/<service> :<port>` and resolves with the local URL once it forwards. */
export function portForward(target: KubeTarget, kubectl = process.env.KUBECTL ?? 'kubectl'): Promise<PortForward> {
  const args = ['port-forward', '--context', target.context, '-n', target.namespace, `svc/${target.service}`, `:${target.port}`, '--address', '127.0.0.1'];
  return new Promise((resolve, reject) => {
    let child: ChildProcess;
    try {
      child = spawn(kubectl, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (err) {
      reject(new CliError(`cannot run ${kubectl}: ${(err as Error).message}`, ExitCodes.CONNECTION));
      return;
    }
    let said = '';
    const fail = (why: string): void => reject(new CliError(
      `cannot port-forward to svc/${target.service} in namespace ${target.namespace} (context ${target.context}): ${why}. Give --kube-namespace / --kube-service, or run 'kubectl port-forward' yourself and use --server`,
      ExitCodes.CONNECTION,
    ));
    const timer = setTimeout(() => { child.kill(); fail('no answer in 30 s'); }, 30_000);
    child.on('error', (err) => { clearTimeout(timer); fail((err as NodeJS.ErrnoException).code === 'ENOENT' ? `${kubectl} is not on PATH` : err.message); });
    child.on('exit', (code) => { clearTimeout(timer); fail(said.trim().split('\n').pop() || `kubectl exited ${code}`); });
    const onData = (d: Buffer): void => {
      said += d.toString();
      const m = /Forwarding from 127\.0\.0\.1:(\d+)/.exec(said);
      if (!m) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      child.stdout!.removeListener('data', onData);
      child.stdout!.resume();
      child.stderr!.resume();
      child.unref();
      resolve({ url: `http://127.0.0.1:${m[1]}`, close: () => { child.kill(); } });
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', (d: Buffer) => { said += d.toString(); });
  });
}
