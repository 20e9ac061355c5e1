// Partitions of executions over operator replicas: the pure assignment (stable partition of an id, rendezvous owners,
// live members, the per-partition decision) as tables, then replicas against the Kubernetes API test server (real
// HTTP): every partition held by exactly one replica, never two at once, and a crashed replica's share moves.
import { CoordinationV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type KubeTestServer, startKubeTestServer } from '../../test/kube/test-server/index.js';
import { leaseTimingFromEnv } from './config.js';
import { assignPartitions, decidePartition, flowPartitionOf, liveMembers, partitionOf, partitionsFromEnv, wantedPartitions } from './partitioning.js';
import { memberLeaseName, partitionLeaseName, startPartitions, type PartitionSet } from './partitions.js';

const NOW = Date.parse('2026-05-01T00:00:00Z');

describe('partition assignment (pure)', () => {
  it('an execution id always lands in the same partition: sha256 of the id, first 32 bits, mod P', () => {
    // Golden values: changing the function would move running executions between replicas during an upgrade.
    expect([partitionOf('abc', 16), partitionOf('abc', 7), partitionOf('5dJ2kQ9xZ', 16), partitionOf('x', 1)]).toEqual([15, 5, 13, 0]);
    // The starts of a concurrency-limited flow are decided by the holder of its flow's partition.
    expect(flowPartitionOf('company.team', 'etl', 16)).toBe(partitionOf('flow:company.team/etl', 16));
    const counts = new Array(16).fill(0);
    for (let i = 0; i < 16_000; i++) counts[partitionOf(`exec-${i}`, 16)]++;
    expect(Math.min(...counts)).toBeGreaterThan(800);
    expect(Math.max(...counts)).toBeLessThan(1200);
  });

  it('each partition has one wanted owner, shares differ by one at most, and a member leaving moves little else', () => {
    for (const [members, partitions] of [[['op-a', 'op-b', 'op-c'], 16], [['op-a', 'op-b'], 16], [['x', 'y', 'z', 'w', 'v'], 64], [['solo'], 4]] as const) {
      const shares = members.map((m) => wantedPartitions(m, members, partitions));
      expect(shares.flat().sort((a, b) => a - b)).toEqual([...Array(partitions).keys()]);
      const sizes = shares.map((s) => s.length);
      expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(1);
    }
    // op-b leaves: its 21 or 22 partitions move; of the others' 42 or 43, at most a handful do.
    const before = assignPartitions(['op-a', 'op-b', 'op-c'], 64), after = assignPartitions(['op-a', 'op-c'], 64);
    const movedOthers = before.filter((m, p) => m !== 'op-b' && after[p] !== m).length;
    expect(movedOthers).toBeLessThanOrEqual(8);
    // The same live set in another order gives the same answer (every replica computes it alone).
    expect(assignPartitions(['op-c', 'op-a', 'op-b'], 64)).toEqual(before);
    expect(assignPartitions([], 3)).toEqual([undefined, undefined, undefined]);
  });

  it('live members: held and renewed (as observed here) within the lease duration; self always', () => {
    const m = (identity: string, holder: string | undefined, observedAt: number) => ({ identity, lease: { ...(holder ? { holderIdentity: holder } : {}), leaseDurationSeconds: 15 }, observedAt });
    expect(liveMembers([m('b', 'b', NOW - 14_999), m('c', 'c', NOW - 15_000), m('d', undefined, NOW), m('e', 'x', NOW)], NOW, 'a')).toEqual(['a', 'b']);
  });

  it.each<[string, Parameters<typeof decidePartition>, ReturnType<typeof decidePartition>]>([
    ['wanted, no lease: create', [undefined, NOW, 'a', true], { type: 'create' }],
    ['wanted, released: acquire', [{ renewTime: NOW, leaseDurationSeconds: 1 }, NOW, 'a', true], { type: 'acquire' }],
    ['wanted, held by a live other: wait for release or expiry', [{ holderIdentity: 'b', leaseDurationSeconds: 15 }, NOW, 'a', true, NOW - 5_000], { type: 'wait', expiresAt: NOW + 10_000 }],
    ['wanted, the other stopped renewing: acquire', [{ holderIdentity: 'b', leaseDurationSeconds: 15 }, NOW, 'a', true, NOW - 15_000], { type: 'acquire' }],
    ['wanted, held by me: renew', [{ holderIdentity: 'a', leaseDurationSeconds: 15 }, NOW, 'a', true, NOW], { type: 'renew' }],
    ['not wanted, held by me: release', [{ holderIdentity: 'a', leaseDurationSeconds: 15 }, NOW, 'a', false, NOW], { type: 'release' }],
    ['not wanted, expired or absent: never taken', [{ holderIdentity: 'b', leaseDurationSeconds: 15 }, NOW, 'a', false, NOW - 60_000], { type: 'wait' }],
  ])('%s', (_name, args, action) => {
    expect(decidePartition(...args)).toEqual(action);
  });

  it('lease timing: 15 s / 5 s by default; a renewal not below 2/3 of the duration is refused naming both settings', () => {
    expect(leaseTimingFromEnv({})).toEqual({ leaseDurationSec: 15, renewEverySec: 5 });
    expect(leaseTimingFromEnv({ LEADER_ELECTION_LEASE_DURATION_SECONDS: '6' })).toEqual({ leaseDurationSec: 6, renewEverySec: 2 });
    expect(() => leaseTimingFromEnv({ LEADER_ELECTION_LEASE_DURATION_SECONDS: '9', LEADER_ELECTION_RENEW_SECONDS: '6' })).toThrow(/LEADER_ELECTION_RENEW_SECONDS.*LEADER_ELECTION_LEASE_DURATION_SECONDS/);
    for (const bad of ['1', '2.5', '-3', 'x', '301']) expect(() => leaseTimingFromEnv({ LEADER_ELECTION_LEASE_DURATION_SECONDS: bad })).toThrow(/LEADER_ELECTION_LEASE_DURATION_SECONDS/);
  });

  it('OPERATOR_PARTITIONS: default 16, refused outside 1..1024 naming the variable', () => {
    expect(partitionsFromEnv({})).toBe(16);
    expect(partitionsFromEnv({ OPERATOR_PARTITIONS: '3' })).toBe(3);
    for (const bad of ['0', '1025', '2.5', 'many']) expect(() => partitionsFromEnv({ OPERATOR_PARTITIONS: bad })).toThrow(/OPERATOR_PARTITIONS/);
  });
});

describe('startPartitions (Kubernetes API test server)', { timeout: 90_000 }, () => {
  let server: KubeTestServer;
  beforeAll(async () => { server = await startKubeTestServer({}); });
  afterAll(async () => { await server?.close(); });

  /** Polls `check`, asserting on every poll that no partition is held by two replicas at once. */
  async function until(sets: PartitionSet[], check: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const all = sets.flatMap((s) => s.held());
      expect(new Set(all).size, `a partition held twice: ${sets.map((s) => s.held().join(',')).join(' | ')}`).toBe(all.length);
      if (check()) return;
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${sets.map((s) => s.held().join(',')).join(' | ')}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  function replica(group: string, identity: string, events: string[], partitions = 12): PartitionSet {
    return startPartitions({
      kc: server.kubeConfig(), namespace: 'default', group, identity, partitions, leaseDurationSec: 2, renewEverySec: 0.2,
      onAcquired: (p) => { events.push(`${identity}+${p}`); },
      onLost: (p) => { events.push(`${identity}-${p}`); },
      onError: () => {},
    });
  }
  const covered = (sets: PartitionSet[], n = 12) => sets.flatMap((s) => s.held()).length === n;

  it('three replicas share every partition once; one stopping hands its share over; a crashed one loses it at expiry', async () => {
    const events: string[] = [];
    const a = replica('g1', 'op-a', events);
    await until([a], () => covered([a]), 'the only replica to hold everything');
    const b = replica('g1', 'op-b', events), c = replica('g1', 'op-c', events);
    const sets = [a, b, c];
    await until(sets, () => covered(sets) && sets.every((s) => s.held().length > 0), 'all three to hold a share');
    expect(sets.map((s) => s.held())).toEqual(['op-a', 'op-b', 'op-c'].map((m) => wantedPartitions(m, ['op-a', 'op-b', 'op-c'], 12)));
    // A partition a kept moving to b or c was first lost by a (its controller stopped) and only then acquired.
    for (const p of b.held()) {
      expect(events.indexOf(`op-a-${p}`)).toBeGreaterThanOrEqual(0);
      expect(events.indexOf(`op-a-${p}`)).toBeLessThan(events.indexOf(`op-b+${p}`));
    }
    const leases = server.kubeConfig().makeApiClient(CoordinationV1Api);
    expect((await leases.readNamespacedLease({ name: partitionLeaseName('g1', b.held()[0]!), namespace: 'default' })).spec?.holderIdentity).toBe('op-b');

    // A clean stop releases: the others take its share without waiting for the lease to expire.
    await b.stop();
    expect((await leases.readNamespacedLease({ name: memberLeaseName('g1', 'op-b'), namespace: 'default' })).spec?.holderIdentity).toBeUndefined();
    await until([a, c], () => covered([a, c]), 'a and c to take over b');

    // A crash (no release): nobody acts on c's partitions until its leases expire, then a holds everything.
    const cHeld = c.held();
    await c.stop({ release: false });
    expect((await leases.readNamespacedLease({ name: partitionLeaseName('g1', cHeld[0]!), namespace: 'default' })).spec?.holderIdentity).toBe('op-c');
    await until([a], () => covered([a]), 'a to hold everything after c expired');
    await a.stop();
  });

  it('replicas that disagree on OPERATOR_PARTITIONS hold nothing while they see each other', async () => {
    const a = replica('g2', 'op-a', [], 4);
    await until([a], () => a.held().length === 4, 'a to hold its 4');
    const b = replica('g2', 'op-b', [], 8);
    await until([a, b], () => a.held().length === 0 && b.held().length === 0, 'both to stand back');
    await b.stop();
    await until([a], () => a.held().length === 4, 'a to resume alone');
    await a.stop();
  });
});
