// Which operator replica acts on which execution, decided purely: an execution belongs to partition
// sha256(execution id) mod P (stable: the same id always gives the same partition for a given P), and each partition is
// wanted by one live member: the one rendezvous (highest-random-weight) hashing ranks first among those not yet at
// their fair share (P / members, rounded), so shares differ by at most one and a member joining or leaving moves little
// besides its own share. Holding a partition is a separate Lease (partitions.ts); these functions only decide.
import { createHash } from 'node:crypto';
import { decideLease, type LeaseView } from './leader.js';

/** OPERATOR_PARTITIONS default and bounds. */
export const DEFAULT_PARTITIONS = 16;
export const MAX_PARTITIONS = 1024;

const u32 = (s: string): number => createHash('sha256').update(s).digest().readUInt32BE(0);

/** The partition of an execution: the first 32 bits of sha256(id), big-endian, modulo the partition count. */
export function partitionOf(executionId: string, partitions: number): number {
  return partitions <= 1 ? 0 : u32(executionId) % partitions;
}

/**
 * The partition whose holder decides the starts of a flow's executions when the flow has a concurrency limit (so one
 * replica counts its running executions): sha256 of `flow:<namespace>/<flow id>`, as partitionOf.
 */
export const flowPartitionOf = (namespace: string, flowId: string, partitions: number): number => partitionOf(`flow:${namespace}/${flowId}`, partitions);

/** Members ranked for a partition: highest sha256(member + '/' + partition) first (ties: the smaller identity). */
export function rendezvousRanking(partition: number, members: readonly string[]): string[] {
  return members.map((m) => ({ m, score: u32(`${m}/${partition}`) }))
    .sort((a, b) => b.score - a.score || (a.m < b.m ? -1 : a.m > b.m ? 1 : 0)).map((x) => x.m);
}

/**
 * The member wanting each partition (index = partition): partitions in order, each to the best-ranked member still
 * below its fair share. Every replica computes the same answer from the same live set.
 */
export function assignPartitions(members: readonly string[], partitions: number): (string | undefined)[] {
  const unique = [...new Set(members)];
  if (!unique.length) return new Array<undefined>(partitions).fill(undefined);
  // Fair shares: floor(P / N) each, and P mod N members (the first to get there) one more.
  const floor = Math.floor(partitions / unique.length);
  let extra = partitions % unique.length;
  const load = new Map(unique.map((m) => [m, 0]));
  const out: string[] = [];
  for (let p = 0; p < partitions; p++) {
    const m = rendezvousRanking(p, unique).find((c) => load.get(c)! < floor || (load.get(c) === floor && extra > 0))!;
    if (load.get(m) === floor) extra--;
    load.set(m, load.get(m)! + 1);
    out.push(m);
  }
  return out;
}

/** A member lease seen in a listing, with when this replica first saw its current renewal (local clock). */
export interface MemberView { identity: string; lease: LeaseView; observedAt: number }

/**
 * Live members: those whose member lease is held and was renewed (as this replica observed it) within its duration.
 * `self` is always live (its own lease is renewed by the same loop that uses this answer).
 */
export function liveMembers(members: readonly MemberView[], now: number, self: string): string[] {
  const live = new Set([self]);
  for (const m of members) {
    if (!m.lease.holderIdentity || m.lease.holderIdentity !== m.identity) continue;
    if (now < m.observedAt + (m.lease.leaseDurationSeconds ?? 0) * 1000) live.add(m.identity);
  }
  return [...live].sort();
}

export type PartitionAction =
  /** Wanted by us: take it (no lease yet, released, or expired) or keep it. */
  | { type: 'create' } | { type: 'acquire' } | { type: 'renew' }
  /** Wanted by another member while we hold it: stop acting on it, then clear the holder. */
  | { type: 'release' }
  /** Held by someone else (or wanted by someone else): nothing to write. */
  | { type: 'wait'; expiresAt?: number };

/**
 * One partition in one round. Hand-over never overlaps: a wanted partition is acquired only when its lease has no
 * holder or has expired (decideLease), and a holder releases only after it stopped acting (the caller's order).
 */
export function decidePartition(lease: LeaseView | undefined, now: number, identity: string, wanted: boolean, observedAt?: number): PartitionAction {
  if (!wanted) return lease?.holderIdentity === identity ? { type: 'release' } : { type: 'wait' };
  const action = decideLease(lease, now, identity, observedAt);
  return action;
}

/** The partitions this identity wants among the live members. */
export function wantedPartitions(identity: string, live: readonly string[], partitions: number): number[] {
  return assignPartitions(live, partitions).flatMap((m, p) => (m === identity ? [p] : []));
}

/** OPERATOR_PARTITIONS from the environment: an integer 1..MAX_PARTITIONS, the same on every replica. */
export function partitionsFromEnv(env: NodeJS.ProcessEnv): number {
  const raw = env.OPERATOR_PARTITIONS;
  if (raw === undefined || raw === '') return DEFAULT_PARTITIONS;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > MAX_PARTITIONS) {
    throw new Error(`OPERATOR_PARTITIONS must be an integer from 1 to ${MAX_PARTITIONS} (the same on every operator replica), got '${raw}'`);
  }
  return n;
}
