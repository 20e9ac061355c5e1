// The sweeper's decision for one Execution resource, as a table: archive once finished, delete once archived at this
// very version and past the TTL, label it (out of the caches) until then, keep anything live, moving on (pending
// commands) or read by a running parent; a labelled resource is archived by its label.
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
    ['archived, TTL not reached: label (the caches drop it)', {}, endMs + 3599_999, 3600_000, 'label'],
    ['labelled, TTL not reached: keep', { labelled: true, archivedVersion: undefined, resourceVersion: 8 }, endMs + 3599_999, 3600_000, 'keep'],
    ['labelled, TTL reached: delete (the label proves the archive)', { labelled: true, archivedVersion: undefined, resourceVersion: 8 }, endMs + 3600_000, 3600_000, 'delete'],
    ['labelled with a restart pending: unlabel (live again)', { labelled: true, pendingCommands: 1 }, endMs + 1e9, 0, 'unlabel'],
    ['labelled and running (edited by hand): unlabel', { labelled: true, state: 'RUNNING' }, endMs + 1e9, 0, 'unlabel'],
    ['labelled and being deleted: keep', { labelled: true, deleting: true, pendingCommands: 1 }, endMs + 1e9, 0, 'keep'],
    ['labelled child of a running parent: keep', { labelled: true, parentRunning: true }, endMs + 1e9, 0, 'keep'],
    ['archived, TTL reached: delete', {}, endMs + 3600_000, 3600_000, 'delete'],
    ['TTL 0: delete as soon as archived', {}, endMs, 0, 'delete'],
    ['a restart command pending: keep (even archived)', { pendingCommands: 1 }, endMs + 1e9, 0, 'keep'],
    ['a restart pending, not archived: keep', { pendingCommands: 1, archivedVersion: undefined }, endMs + 1e9, 0, 'keep'],
    ['child of a running parent: archived but kept', { parentRunning: true }, endMs + 1e9, 0, 'keep'],
    ['child of a running parent, not archived: archive', { parentRunning: true, archivedVersion: undefined }, endMs, 0, 'archive'],
    ['being deleted: keep', { deleting: true }, endMs + 1e9, 0, 'keep'],
    ['no end date: the creation counts', { endDate: undefined, created: END }, endMs + 10, 10, 'delete'],
    ['no date at all: label, never delete', { endDate: 'garbage' }, endMs + 1e9, 0, 'label'],
    ['labelled, no date at all: keep', { endDate: 'garbage', labelled: true }, endMs + 1e9, 0, 'keep'],
    ['FAILED, KILLED, WARNING, CANCELLED, RETRIED end too', { state: 'KILLED' }, endMs, 0, 'delete'],
  ])('%s', (_name, facts, now, ttl, want) => {
    expect(decideSweep({ ...base, ...facts }, now, ttl)).toBe(want);
  });
});
