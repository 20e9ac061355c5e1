// Leader election: the pure decision as a table, then electors against the Kubernetes API test server (real HTTP):
// exactly one leader, take-over after a stop (lease released) or after the holder's lease expires.
import { CoordinationV1Api } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type KubeTestServer, startKubeTestServer } from '../../test/kube/test-server/index.js';
import { type LeaderElection, type LeaseView, decideLease, leaseView, mustStepDown, startLeaderElection } from './leader.js';

const NOW = Date.parse('2026-05-01T00:00:00Z');

describe('decideLease', () => {
  it.each<[string, LeaseView | undefined, string, number | undefined, ReturnType<typeof decideLease>]>([
    ['no lease: create it', undefined, 'a', undefined, { type: 'create' }],
    ['held by me: renew', { holderIdentity: 'a', renewTime: NOW - 60_000, leaseDurationSeconds: 15 }, 'a', undefined, { type: 'renew' }],
    ['released (no holder): acquire', { renewTime: NOW, leaseDurationSeconds: 1 }, 'a', undefined, { type: 'acquire' }],
    ['held by another, fresh: wait', { holderIdentity: 'b', renewTime: NOW - 5_000, leaseDurationSeconds: 15 }, 'a', undefined, { type: 'wait', expiresAt: NOW + 10_000 }],
    ['held by another, expired: acquire', { holderIdentity: 'b', renewTime: NOW - 15_000, leaseDurationSeconds: 15 }, 'a', undefined, { type: 'acquire' }],
    ['held by another, no renew time: acquire', { holderIdentity: 'b', leaseDurationSeconds: 15 }, 'a', undefined, { type: 'acquire' }],
    ['expired by its renewTime but observed recently (skew): wait', { holderIdentity: 'b', renewTime: NOW - 60_000, leaseDurationSeconds: 15 }, 'a', NOW - 1_000, { type: 'wait', expiresAt: NOW + 14_000 }],
    ['observed long enough ago: acquire', { holderIdentity: 'b', renewTime: NOW + 60_000, leaseDurationSeconds: 15 }, 'a', NOW - 15_000, { type: 'acquire' }],
  ])('%s', (_name, lease, identity, observedAt, action) => {
    expect(decideLease(lease, NOW, identity, observedAt)).toEqual(action);
  });

  it.each([[0, 9_999, false], [0, 10_000, true], [5_000, 6_000, false]])('step down after last renew %i at %i: %s', (last, now, down) => {
    expect(mustStepDown(last, now, 10_000)).toBe(down);
  });

  it('reads a Lease whose times are strings or dates', () => {
    expect(leaseView({ spec: { holderIdentity: 'a', renewTime: '2026-05-01T00:00:00.000000Z' as never, leaseDurationSeconds: 3 } })).toEqual({ holderIdentity: 'a', renewTime: NOW, leaseDurationSeconds: 3 });
    expect(leaseView({ spec: { renewTime: new Date(NOW) } })).toEqual({ renewTime: NOW });
  });
});

// Waits of up to 20 s each: the test limit sits well above them for a loaded 2-core CI machine.
describe('startLeaderElection (Kubernetes API test server)', { timeout: 90_000 }, () => {
  let server: KubeTestServer;
  beforeAll(async () => { server = await startKubeTestServer({ tokens: { 'operator-token': { username: 'system:serviceaccount:flowpilot:operator' } } }); });
  afterAll(async () => { await server?.close(); });

  async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  function elector(leaseName: string, identity: string, events: string[], extra: { leaseDurationSec?: number; renewEverySec?: number } = {}): LeaderElection {
    return startLeaderElection({
      kc: server.kubeConfig(), namespace: 'default', leaseName, identity, leaseDurationSec: 4, renewEverySec: 0.3, ...extra,
      onStartedLeading: () => { events.push(`${identity}:start`); },
      onStoppedLeading: () => { events.push(`${identity}:stop`); },
      onError: () => {},
    });
  }

  const holder = async (leaseName: string) =>
    (await server.kubeConfig().makeApiClient(CoordinationV1Api).readNamespacedLease({ name: leaseName, namespace: 'default' })).spec;

  it('elects exactly one leader; the other takes over when it stops and releases the lease', async () => {
    const events: string[] = [];
    const a = elector('elect-1', 'a', events);
    const b = elector('elect-1', 'b', events);
    await until(() => a.isLeader() || b.isLeader(), 'a leader');
    const [first, second] = a.isLeader() ? [a, b] : [b, a];
    const firstId = first === a ? 'a' : 'b';
    const secondId = first === a ? 'b' : 'a';
    // Over several renew periods, the leadership stays where it is.
    await new Promise((r) => setTimeout(r, 1500));
    expect([first.isLeader(), second.isLeader()]).toEqual([true, false]);
    expect((await holder('elect-1'))?.holderIdentity).toBe(firstId);

    await first.stop();
    expect(first.isLeader()).toBe(false);
    await until(() => second.isLeader(), 'the take-over');
    const spec = await holder('elect-1');
    expect(spec?.holderIdentity).toBe(secondId);
    expect(spec?.leaseTransitions).toBe(1);
    expect(events).toEqual([`${firstId}:start`, `${firstId}:stop`, `${secondId}:start`]);
    await second.stop();
    expect((await holder('elect-1'))?.holderIdentity).toBeUndefined();
  });

  it('takes over a lease whose holder stopped renewing, once it has expired', async () => {
    const coordination = server.kubeConfig().makeApiClient(CoordinationV1Api);
    await coordination.createNamespacedLease({
      namespace: 'default',
      body: { metadata: { name: 'elect-2' }, spec: { holderIdentity: 'crashed', leaseDurationSeconds: 1, renewTime: new Date() as never, leaseTransitions: 4 } },
    });
    const events: string[] = [];
    const c = elector('elect-2', 'c', events);
    try {
      await until(() => c.isLeader(), 'c leading after expiry');
      const spec = await holder('elect-2');
      expect(spec?.holderIdentity).toBe('c');
      expect(spec?.leaseTransitions).toBe(5);
    } finally {
      await c.stop();
    }
    expect(events).toEqual(['c:start', 'c:stop']);
  });

  it('steps down when another identity has taken the lease over', async () => {
    const events: string[] = [];
    const d = elector('elect-3', 'd', events, { leaseDurationSec: 3, renewEverySec: 0.2 });
    try {
      await until(() => d.isLeader(), 'd leading');
      const coordination = server.kubeConfig().makeApiClient(CoordinationV1Api);
      const lease = await coordination.readNamespacedLease({ name: 'elect-3', namespace: 'default' });
      await coordination.replaceNamespacedLease({ name: 'elect-3', namespace: 'default', body: { ...lease, spec: { ...lease.spec, holderIdentity: 'intruder', renewTime: new Date() as never } } });
      await until(() => !d.isLeader(), 'd stepping down');
      expect(events).toEqual(['d:start', 'd:stop']);
    } finally {
      await d.stop();
    }
    expect((await holder('elect-3'))?.holderIdentity).toBe('intruder');
  });

  it('stops leading before its lease expires when it cannot renew (API unreachable)', async () => {
    const own = await startKubeTestServer({ tokens: { t: { username: 'op' } } });
    const events: string[] = [];
    const e = startLeaderElection({
      kc: own.kubeConfig(), namespace: 'default', leaseName: 'elect-4', identity: 'e', leaseDurationSec: 3, renewEverySec: 0.2,
      onStartedLeading: () => { events.push('start'); }, onStoppedLeading: () => { events.push('stop'); }, onError: () => {},
    });
    try {
      await until(() => e.isLeader(), 'e leading');
      await own.close();
      await until(() => !e.isLeader(), 'e stepping down');
      expect(events).toEqual(['start', 'stop']);
    } finally {
      await e.stop();
    }
  });

  it('keeps renewing while onStartedLeading is still running', async () => {
    let release!: () => void;
    const blocked = new Promise<void>((r) => { release = r; });
    const f = startLeaderElection({
      kc: server.kubeConfig(), namespace: 'default', leaseName: 'elect-5', identity: 'f', leaseDurationSec: 2, renewEverySec: 0.2,
      onStartedLeading: () => blocked, onStoppedLeading: () => {}, onError: () => {},
    });
    try {
      await until(() => f.isLeader(), 'f leading');
      const first = String((await holder('elect-5'))?.renewTime);
      await until(async () => String((await holder('elect-5'))?.renewTime) !== first, 'a renewal during the callback');
      expect(f.isLeader()).toBe(true);
    } finally {
      release();
      await f.stop();
    }
  });
});
