// Which operator replica acts on which execution, decided purely: an execution belongs to partition
// sha256(execution id) mod P (stable: the same id always gives the same partition for a given P), and each partition is
// wanted by the live member that rendezvous (highest-random-weight) hashing ranks first, so a member joining or leaving
// moves only its own share. Holding a partition is a separate Lease (partitions.ts); these functions only decide.
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

/** The member that wants `partition`: the highest sha256(member + '/' + partition) (ties: the smaller identity). */
export function rendezvousOwner(partition: number, members: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestScore = -1;
  for (const m of members) {
    const score = u32(`${m}/${partition}`);
    if (score > bestScore || (score === bestScore && best !== undefined && m < best)) { best = m; bestScore = score; }
  }
  return best;
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
  const out: number[] = [];
  for (let p = 0; p < partitions; p++) if (rendezvousOwner(p, live) === identity) out.push(p);
  return out;
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
