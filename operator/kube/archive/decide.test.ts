// The sweeper's decision for one Execution resource, as a table: archive once finished, delete once archived at this
// very version and past the TTL, keep anything live, moving on (pending commands) or read by a running parent.
import { describe, expect, it } from 'vitest';
import { decideSweep, type SweepDecision, type SweepFacts } from './decide.js';

const END = '2026-01-01T00:00:00.000Z';
const endMs = Date.parse(END);
const base: SweepFacts = { state: 'SUCCESS', endDate: END, pendingCommands: 0, resourceVersion: 7, archivedVersion: 7, parentRunning: false, deleting: false };

describe('decideSweep', () => {
  it.each<[string, Partial<SweepFacts>, number, number, SweepDecision]>([
    ['running: kept', { state: 'RUNNING', archivedVersion: undefined }, endMs + 1e9, 0, 'keep'],
    ['paused: kept', { state: 'PAUSED' }, endMs + 1e9, 0, 'keep'],
    ['finished, not archived: archive', { archivedVersion: undefined }, endMs, 3600_000, 'archive'],
    ['archived at an older version (restarted and ended again): archive', { archivedVersion: 5 }, endMs + 1e9, 0, 'archive'],
    ['archived, TTL not reached: keep', {}, endMs + 3599_999, 3600_000, 'keep'],
    ['archived, TTL reached: delete', {}, endMs + 3600_000, 3600_000, 'delete'],
    ['TTL 0: delete as soon as archived', {}, endMs, 0, 'delete'],
    ['a restart command pending: keep (even archived)', { pendingCommands: 1 }, endMs + 1e9, 0, 'keep'],
    ['a restart pending, not archived: keep', { pendingCommands: 1, archivedVersion: undefined }, endMs + 1e9, 0, 'keep'],
    ['child of a running parent: archived but kept', { parentRunning: true }, endMs + 1e9, 0, 'keep'],
    ['child of a running parent, not archived: archive', { parentRunning: true, archivedVersion: undefined }, endMs, 0, 'archive'],
    ['being deleted: keep', { deleting: true }, endMs + 1e9, 0, 'keep'],
    ['no end date: the creation counts', { endDate: undefined, created: END }, endMs + 10, 10, 'delete'],
    ['no date at all: keep', { endDate: 'garbage' }, endMs + 1e9, 0, 'keep'],
    ['FAILED, KILLED, WARNING, CANCELLED, RETRIED end too', { state: 'KILLED' }, endMs, 0, 'delete'],
  ])('%s', (_name, facts, now, ttl, want) => {
    expect(decideSweep({ ...base, ...facts }, now, ttl)).toBe(want);
  });
});
