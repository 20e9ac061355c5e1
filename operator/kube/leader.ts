// Leader election on a coordination.k8s.io/v1 Lease (client-go's algorithm): a pure decision (lease, now, identity) →
// action, and an elector that applies it with optimistic concurrency (resourceVersion), renews while leading, steps
// down when it cannot renew before its lease would expire, and releases the lease (holder cleared) when stopped.
import { CoordinationV1Api, type KubeConfig, type V1Lease, V1MicroTime } from '@kubernetes/client-node';

/** What the decision needs to know of a Lease. */
export interface LeaseView {
  holderIdentity?: string;
  /** Milliseconds since the epoch. */
  renewTime?: number;
  leaseDurationSeconds?: number;
}

export type LeaderAction =
  | { type: 'create' }
  | { type: 'renew' }
  | { type: 'acquire' }
  | { type: 'wait'; expiresAt: number };

/**
 * `observedAt` (local clock) is when this holder/renewTime pair was first seen; when given it measures the expiry
 * instead of the holder's renewTime, so clock skew between candidates cannot make a live lease look expired.
 */
export function decideLease(lease: LeaseView | undefined, now: number, identity: string, observedAt?: number): LeaderAction {
  if (!lease) return { type: 'create' };
  if (lease.holderIdentity === identity) return { type: 'renew' };
  if (!lease.holderIdentity) return { type: 'acquire' };
  const since = observedAt ?? lease.renewTime;
  if (since === undefined) return { type: 'acquire' };
  const expiresAt = since + (lease.leaseDurationSeconds ?? 0) * 1000;
  return now >= expiresAt ? { type: 'acquire' } : { type: 'wait', expiresAt };
}

/** A leader that could not renew for `renewDeadlineMs` since its last successful renew must stop leading. */
export const mustStepDown = (lastRenewAt: number, now: number, renewDeadlineMs: number): boolean => now - lastRenewAt >= renewDeadlineMs;

export interface LeaderElectionOptions {
  kc: KubeConfig;
  namespace: string;
  leaseName: string;
  identity: string;
  leaseDurationSec?: number;
  renewEverySec?: number;
  /** Stop leading when renewals have failed this long (default 2/3 of the lease duration, always below it). */
  renewDeadlineSec?: number;
  onStartedLeading: () => void | Promise<void>;
  onStoppedLeading: () => void | Promise<void>;
  /** Errors of the Kubernetes API (logged by default; never contains tokens). */
  onError?: (err: Error) => void;
}

export interface LeaderElection {
  isLeader(): boolean;
  /**
   * Stops the elector, releases the lease when holding it, and calls onStoppedLeading if it was leading.
   * `release: false` leaves the lease to expire, as a replica killed at once would (tests of a crash).
   */
  stop(opts?: { release?: boolean }): Promise<void>;
}

const toMs = (t: unknown): number | undefined => {
  if (t instanceof Date) return t.getTime();
  if (typeof t === 'string') { const ms = Date.parse(t); return Number.isNaN(ms) ? undefined : ms; }
  return undefined;
};

export function leaseView(lease: V1Lease): LeaseView {
  const view: LeaseView = {};
  const spec = lease.spec ?? {};
  if (spec.holderIdentity) view.holderIdentity = spec.holderIdentity;
  const renew = toMs(spec.renewTime);
  if (renew !== undefined) view.renewTime = renew;
  if (spec.leaseDurationSeconds !== undefined) view.leaseDurationSeconds = spec.leaseDurationSeconds;
  return view;
}

export const statusOf = (err: unknown): number | undefined => (err as { code?: number })?.code;

/** The spec of a Lease `identity` holds from `now` (created, taken over, or renewed). */
export function heldSpec(previous: V1Lease['spec'], identity: string, durationSec: number, now: number, takeOver: boolean): V1Lease['spec'] {
  return {
    ...previous,
    holderIdentity: identity,
    leaseDurationSeconds: durationSec,
    renewTime: new V1MicroTime(now),
    acquireTime: takeOver || !previous?.acquireTime ? new V1MicroTime(now) : previous.acquireTime,
    leaseTransitions: (previous?.leaseTransitions ?? 0) + (takeOver && previous ? 1 : 0),
  };
}

/** The spec of a released Lease: no holder, expired at once for anyone reading it. */
export const releasedSpec = (previous: V1Lease['spec'], now: number): V1Lease['spec'] =>
  ({ ...previous, holderIdentity: undefined, leaseDurationSeconds: 1, renewTime: new V1MicroTime(now) });

export function startLeaderElection(options: LeaderElectionOptions): LeaderElection {
  const { namespace, leaseName: name, identity } = options;
  const durationSec = options.leaseDurationSec ?? 15;
  const renewMs = (options.renewEverySec ?? 5) * 1000;
  const deadlineMs = Math.min((options.renewDeadlineSec ?? (durationSec * 2) / 3) * 1000, durationSec * 1000 - 1);
  const api = options.kc.makeApiClient(CoordinationV1Api);
  const onError = options.onError ?? ((err: Error) => console.warn(`leader election (${name}): ${err.message}`));

  let leading = false;
  let stopped = false;
  let lastRenewAt = 0;
  let observed: { key: string; at: number } | undefined;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();

  const spec = (now: number, previous: V1Lease['spec'], takeOver: boolean): V1Lease['spec'] => heldSpec(previous, identity, durationSec, now, takeOver);

  // Callbacks run beside the renew loop (a long onStartedLeading must not delay renewals); stop() awaits them.
  let callbacks: Promise<void> = Promise.resolve();

  function becomeLeader(now: number): void {
    lastRenewAt = now;
    if (leading || stopped) return;
    leading = true;
    callbacks = callbacks.then(() => callback(options.onStartedLeading));
  }

  function loseLeadership(): Promise<void> {
    if (!leading) return callbacks;
    leading = false;
    callbacks = callbacks.then(() => callback(options.onStoppedLeading));
    return callbacks;
  }

  async function callback(fn: () => void | Promise<void>): Promise<void> {
    try { await fn(); } catch (err) { onError(err as Error); }
  }

  /** One round: read, decide, write; returns when the next round should run (ms). */
  async function round(): Promise<number> {
    let lease: V1Lease | undefined;
    try {
      lease = await api.readNamespacedLease({ name, namespace });
    } catch (err) {
      if (statusOf(err) !== 404) return failed(err);
    }
    const now = Date.now();
    const view = lease ? leaseView(lease) : undefined;
    const key = `${view?.holderIdentity ?? ''}|${view?.renewTime ?? ''}|${lease?.metadata?.resourceVersion ?? ''}`;
    if (observed?.key !== key) observed = { key, at: now };
    const action = decideLease(view, now, identity, observed.at);
    try {
      if (action.type === 'wait') {
        void loseLeadership();
        return Math.max(100, Math.min(renewMs, action.expiresAt - now + 50));
      }
      if (action.type === 'create') {
        await api.createNamespacedLease({ namespace, body: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace }, spec: spec(now, undefined, true) } });
      } else {
        const body: V1Lease = { ...lease!, spec: spec(now, lease!.spec, action.type === 'acquire') };
        await api.replaceNamespacedLease({ name, namespace, body });
      }
      becomeLeader(now);
      return renewMs;
    } catch (err) {
      // 409: someone else wrote the lease between our read and our write; the next round reads who holds it.
      if (statusOf(err) === 409) { if (leading && mustStepDown(lastRenewAt, Date.now(), deadlineMs)) void loseLeadership(); return 200; }
      return failed(err);
    }
  }

  function failed(err: unknown): number {
    onError(err as Error);
    if (leading && mustStepDown(lastRenewAt, Date.now(), deadlineMs)) void loseLeadership();
    return Math.min(renewMs, 1000);
  }

  function loop(): void {
    if (stopped) return;
    running = round().then((next) => {
      if (!stopped) timer = setTimeout(loop, next);
    }, (err) => { onError(err as Error); if (!stopped) timer = setTimeout(loop, renewMs); });
  }

  async function release(): Promise<void> {
    try {
      const lease = await api.readNamespacedLease({ name, namespace });
      if (lease.spec?.holderIdentity !== identity) return;
      const body: V1Lease = { ...lease, spec: releasedSpec(lease.spec, Date.now()) };
      await api.replaceNamespacedLease({ name, namespace, body });
    } catch (err) {
      onError(err as Error);
    }
  }

  // A renew request that hangs must not keep us leading past the deadline: check it on a clock of our own.
  const watchdog = setInterval(() => {
    if (leading && !stopped && mustStepDown(lastRenewAt, Date.now(), deadlineMs)) void loseLeadership();
  }, Math.max(50, Math.min(renewMs, deadlineMs) / 4));
  watchdog.unref();

  loop();
  return {
    isLeader: () => leading,
    async stop(opts = {}) {
      if (stopped) return;
      stopped = true;
      clearInterval(watchdog);
      clearTimeout(timer);
      await running;
      clearTimeout(timer);
      const wasLeading = leading;
      if (wasLeading && opts.release !== false) await release();
      await loseLeadership();
    },
  };
}
