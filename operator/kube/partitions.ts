// Executions spread over the live operator replicas (OPERATOR_PARTITIONS): each replica announces itself with a member
// Lease and holds the partitions rendezvous hashing gives it among the live members, each partition guarded by its own
// coordination.k8s.io Lease (client-go's rules, leader.ts); shares differ by one at most (partitioning.ts). One loop per replica: list the group's Leases (one request),
// renew its member Lease, then create/acquire/renew the partitions it wants and release the others (it stops acting on
// a partition before it clears the holder; the next holder takes it only once released or expired, so two replicas
// never act on one partition at once). A replica that cannot renew a partition for the renew deadline drops it.
import { CoordinationV1Api, type KubeConfig, type V1Lease } from '@kubernetes/client-node';
import { heldSpec, leaseView, mustStepDown, releasedSpec, statusOf } from './leader.js';
import { GROUP } from './names.js';
import { assignPartitions, decidePartition, liveMembers, partitionOf, type MemberView, type PartitionAction } from './partitioning.js';
import { labelValue } from './store/labels.js';
import { slugName } from './names.js';

export const PARTITION_LABELS = {
  /** The lease group (the leader Lease's name): replicas of one operator share it. */
  group: `${GROUP}/lease-group`,
  /** `member` or `partition`. */
  role: `${GROUP}/lease-role`,
} as const;
export const PARTITION_ANNOTATIONS = {
  /** Member Lease: the replica's identity (kept when the holder is cleared). */
  member: `${GROUP}/member`,
  /** Member Lease: OPERATOR_PARTITIONS of that replica (replicas that disagree hold nothing while they see each other). */
  partitions: `${GROUP}/partitions`,
} as const;

/** Lease names: `<group>-p<n>` for partition n, `<group>-m-<slug of identity>` for a member. */
export const partitionLeaseName = (group: string, partition: number): string => `${group}-p${partition}`;
export const memberLeaseName = (group: string, identity: string): string => slugName(`${group}-m`, identity, 253);

/** Member Leases neither held nor renewed for this long are deleted (replicas that are gone: Pod names change). */
const FORGET_MEMBER_MS = 3_600_000;

export interface PartitionsOptions {
  kc: KubeConfig;
  namespace: string;
  /** Group name: prefix of the Lease names, value of the group label. */
  group: string;
  identity: string;
  partitions: number;
  leaseDurationSec?: number;
  renewEverySec?: number;
  /** Drop a partition when its renewals have failed this long (default 2/3 of the lease duration). */
  renewDeadlineSec?: number;
  /** This replica now holds the partition (serialized with onLost; the renew loop does not wait for it). */
  onAcquired: (partition: number) => void | Promise<void>;
  /** This replica no longer holds the partition: it must stop acting on its executions (owns() is already false). */
  onLost: (partition: number) => void | Promise<void>;
  onError?: (err: Error) => void;
}

export interface PartitionSet {
  readonly count: number;
  /** Whether this replica holds the execution's partition now. */
  owns(executionId: string): boolean;
  holds(partition: number): boolean;
  held(): number[];
  /** Resolves when the acquire/lose callbacks queued so far have run (tests). */
  settled(): Promise<void>;
  /** Stops; `release: false` leaves every Lease to expire, as a replica killed at once would (tests of a crash). */
  stop(opts?: { release?: boolean }): Promise<void>;
}

export function startPartitions(o: PartitionsOptions): PartitionSet {
  const { namespace, group, identity, partitions: count } = o;
  const durationSec = o.leaseDurationSec ?? 15;
  const renewMs = (o.renewEverySec ?? 5) * 1000;
  const deadlineMs = Math.min((o.renewDeadlineSec ?? (durationSec * 2) / 3) * 1000, durationSec * 1000 - 1);
  const api = o.kc.makeApiClient(CoordinationV1Api);
  const onError = o.onError ?? ((err: Error) => console.warn(`partitions (${group}): ${err.message}`));
  const selector = `${PARTITION_LABELS.group}=${labelValue(group)}`;
  const memberName = memberLeaseName(group, identity);
  const labels = (role: string) => ({ [PARTITION_LABELS.group]: labelValue(group), [PARTITION_LABELS.role]: role });

  /** Partitions held, with the time of their last successful write. */
  const held = new Map<number, number>();
  /** Per Lease name: when its current holder/renewTime/resourceVersion was first seen (local clock, skew-proof expiry). */
  const observed = new Map<string, { key: string; at: number }>();
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  let callbacks: Promise<void> = Promise.resolve();
  let mismatchLogged = false;

  const callback = (fn: () => void | Promise<void>): Promise<void> => {
    callbacks = callbacks.then(async () => { try { await fn(); } catch (err) { onError(err as Error); } });
    return callbacks;
  };
  const gain = (p: number, now: number): void => {
    const had = held.has(p);
    held.set(p, now);
    if (!had && !stopped) void callback(() => o.onAcquired(p));
  };
  const drop = (p: number): Promise<void> => {
    if (!held.delete(p)) return callbacks;
    return callback(() => o.onLost(p));
  };

  function observedAt(lease: V1Lease, now: number): number {
    const name = lease.metadata?.name ?? '';
    const s = lease.spec ?? {};
    const key = `${s.holderIdentity ?? ''}|${String(s.renewTime ?? '')}|${lease.metadata?.resourceVersion ?? ''}`;
    const seen = observed.get(name);
    if (seen?.key === key) return seen.at;
    observed.set(name, { key, at: now });
    return now;
  }

  async function write(name: string, lease: V1Lease | undefined, spec: V1Lease['spec'], role: string, annotations?: Record<string, string>): Promise<boolean> {
    try {
      if (!lease) {
        await api.createNamespacedLease({ namespace, body: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace, labels: labels(role), ...(annotations ? { annotations } : {}) }, spec } });
      } else {
        const metadata = { ...lease.metadata, labels: { ...lease.metadata?.labels, ...labels(role) }, ...(annotations ? { annotations: { ...lease.metadata?.annotations, ...annotations } } : {}) };
        await api.replaceNamespacedLease({ name, namespace, body: { ...lease, metadata, spec } });
      }
      return true;
    } catch (err) {
      // 409: someone else wrote it between our list and our write; the next round sees who holds it.
      if (statusOf(err) !== 409) onError(err as Error);
      return false;
    }
  }

  async function applyPartition(p: number, lease: V1Lease | undefined, action: PartitionAction, now: number): Promise<void> {
    const name = partitionLeaseName(group, p);
    switch (action.type) {
      case 'create': case 'acquire': case 'renew':
        if (await write(name, lease, heldSpec(lease?.spec, identity, durationSec, now, action.type !== 'renew'), 'partition')) gain(p, now);
        return;
      case 'release':
        // Stop acting first (owns() turns false at once, the controller drops its work), then let the next holder in.
        await drop(p);
        await write(name, lease, releasedSpec(lease!.spec, Date.now()), 'partition');
        return;
      case 'wait':
        if (held.has(p)) await drop(p); // someone else holds it now: our renewals failed long enough
    }
  }

  /** One round: list, decide, write; returns when the next round should run (ms). */
  async function round(): Promise<number> {
    let items: V1Lease[];
    try {
      items = (await api.listNamespacedLease({ namespace, labelSelector: selector })).items;
    } catch (err) {
      onError(err as Error);
      return Math.min(renewMs, 1000);
    }
    const now = Date.now();
    const byName = new Map(items.map((l) => [l.metadata?.name ?? '', l]));
    for (const name of observed.keys()) if (!byName.has(name)) observed.delete(name);
    const members: MemberView[] = [];
    let mismatch: string | undefined;
    const stale: V1Lease[] = [];
    for (const l of items) {
      if (l.metadata?.labels?.[PARTITION_LABELS.role] !== 'member') continue;
      const id = l.metadata.annotations?.[PARTITION_ANNOTATIONS.member];
      if (!id || id === identity) continue;
      const view = leaseView(l);
      const m: MemberView = { identity: id, lease: view, observedAt: observedAt(l, now) };
      members.push(m);
      if (liveMembers([m], now, identity).includes(id) && l.metadata.annotations?.[PARTITION_ANNOTATIONS.partitions] !== String(count)) mismatch = id;
      if (now - (view.renewTime ?? 0) > FORGET_MEMBER_MS) stale.push(l);
    }
    const live = liveMembers(members, now, identity);
    if (mismatch && !mismatchLogged) onError(new Error(`replica ${mismatch} runs with another OPERATOR_PARTITIONS than ${count}: holding no partition while both are live`));
    mismatchLogged = Boolean(mismatch);

    const own = byName.get(memberName);
    const memberOk = write(memberName, own, heldSpec(own?.spec, identity, durationSec, now, false), 'member',
      { [PARTITION_ANNOTATIONS.member]: identity, [PARTITION_ANNOTATIONS.partitions]: String(count) });
    let next = renewMs;
    const assigned = assignPartitions(live, count);
    const work: Promise<void>[] = [memberOk.then(() => undefined)];
    for (let p = 0; p < count; p++) {
      const lease = byName.get(partitionLeaseName(group, p));
      const wanted = !mismatch && assigned[p] === identity;
      const action = decidePartition(lease && leaseView(lease), now, identity, wanted, lease && observedAt(lease, now));
      // Wanted but still held by another: look again soon (it releases at its next round, or its lease expires).
      if (action.type === 'wait' && wanted) next = Math.min(next, 1000, Math.max(100, (action.expiresAt ?? now) - now + 50));
      work.push(applyPartition(p, lease, action, now));
    }
    for (const l of stale) {
      work.push(api.deleteNamespacedLease({ name: l.metadata!.name!, namespace, body: { preconditions: { resourceVersion: l.metadata!.resourceVersion! } } })
        .then(() => undefined, (err) => { if (![404, 409].includes(statusOf(err) ?? 0)) onError(err as Error); }));
    }
    await Promise.all(work);
    return next;
  }

  function loop(): void {
    if (stopped) return;
    running = round().then((next) => { if (!stopped) timer = setTimeout(loop, next); },
      (err) => { onError(err as Error); if (!stopped) timer = setTimeout(loop, renewMs); });
  }

  // A renew that hangs must not keep us acting past the deadline: check on a clock of our own.
  const watchdog = setInterval(() => {
    const now = Date.now();
    for (const [p, at] of held) if (mustStepDown(at, now, deadlineMs)) void drop(p);
  }, Math.max(50, Math.min(renewMs, deadlineMs) / 4));
  watchdog.unref();

  loop();
  return {
    count,
    owns: (executionId) => held.has(partitionOf(executionId, count)),
    holds: (partition) => held.has(partition),
    held: () => [...held.keys()].sort((a, b) => a - b),
    settled: () => callbacks,
    async stop(opts = {}) {
      if (stopped) return;
      stopped = true;
      clearInterval(watchdog);
      clearTimeout(timer);
      await running;
      clearTimeout(timer);
      const mine = [...held.keys()];
      for (const p of mine) await drop(p);
      if (opts.release === false) return;
      // Let the others take over at once: clear our holder on every partition and on the member Lease.
      const names = [...mine.map((p) => partitionLeaseName(group, p)), memberName];
      await Promise.all(names.map(async (name) => {
        try {
          const lease = await api.readNamespacedLease({ name, namespace });
          if (lease.spec?.holderIdentity !== identity) return;
          await api.replaceNamespacedLease({ name, namespace, body: { ...lease, spec: releasedSpec(lease.spec, Date.now()) } });
        } catch (err) {
          if (statusOf(err) !== 404) onError(err as Error);
        }
      }));
    },
  };
}
