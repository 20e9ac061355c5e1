// MultipleCondition windows: alignment (day, hour, minutes, advance), expiry with an injected clock, reset after
// firing, durability across reopening the SQLite store, and compare-and-set under concurrent evaluations.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { openEmbeddedStores, type EmbeddedStores } from '../../store/sqlite/index.js';
import { recordMultiple, stepWindow, windowAt, type WindowSpec } from './multiple.js';

const spec = (window = 'P1D', windowAdvance = 'PT0S', resetOnSuccess = true): WindowSpec => ({ window, windowAdvance, resetOnSuccess });
const iso = (d: Date) => d.toISOString();

describe('windowAt', () => {
  it.each([
    ['2024-05-10T15:42:13Z', 'P1D', 'PT0S', 'UTC', '2024-05-10T00:00:00.000Z', '2024-05-11T00:00:00.000Z'],
    ['2024-05-10T15:42:13Z', 'PT1H', 'PT0S', 'UTC', '2024-05-10T15:00:00.000Z', '2024-05-10T16:00:00.000Z'],
    ['2024-05-10T15:42:13Z', 'PT15M', 'PT0S', 'UTC', '2024-05-10T15:30:00.000Z', '2024-05-10T15:45:00.000Z'],
    ['2024-05-10T15:42:13Z', 'PT30S', 'PT0S', 'UTC', '2024-05-10T15:42:13.000Z', '2024-05-10T15:42:43.000Z'],
    // Advance: a day window starting at 14:00; at 10:00 the current window is yesterday's 14:00.
    ['2024-05-10T15:42:13Z', 'P1D', 'PT14H', 'UTC', '2024-05-10T14:00:00.000Z', '2024-05-11T14:00:00.000Z'],
    ['2024-05-10T10:00:00Z', 'P1D', 'PT14H', 'UTC', '2024-05-09T14:00:00.000Z', '2024-05-10T14:00:00.000Z'],
    // A day window starts at midnight of the zone.
    ['2024-05-10T23:30:00Z', 'P1D', 'PT0S', 'Europe/Paris', '2024-05-10T22:00:00.000Z', '2024-05-11T22:00:00.000Z'],
  ])('at %s window %s advance %s (%s) → [%s, %s)', (now, window, advance, zone, start, end) => {
    const w = windowAt(new Date(now), { window, windowAdvance: advance }, zone);
    expect([iso(w.start), iso(w.end)]).toEqual([start, end]);
  });

  it('rejects a bad duration', () => { expect(() => windowAt(new Date(), { window: '1 day', windowAdvance: 'PT0S' })).toThrow(/ISO 8601/); });
});

describe('stepWindow', () => {
  const names = ['a', 'b'];
  const t0 = new Date('2024-05-10T08:00:00Z');
  it('records, fires when all are met and resets', () => {
    const s1 = stepWindow(undefined, ['a'], names, spec(), t0);
    expect(s1.fires).toBe(false);
    expect(s1.next?.results).toEqual({ a: true });
    expect(stepWindow(s1.next, ['a'], names, spec(), t0)).toEqual({ fires: false }); // nothing new: no write
    const s2 = stepWindow(s1.next, ['b'], names, spec(), t0);
    expect(s2.fires).toBe(true);
    expect(s2.next?.results).toEqual({});
  });

  it('condition names that are Object.prototype members (`constructor`, `toString`) are met only when met', () => {
    const hostile = ['a', 'constructor', 'toString'];
    const s1 = stepWindow(undefined, ['a'], hostile, spec(), t0);
    expect(s1.fires).toBe(false);
    const s2 = stepWindow(s1.next, ['constructor'], hostile, spec(), t0);
    expect(s2.fires).toBe(false);
    expect(Object.keys(s2.next!.results)).toEqual(['a', 'constructor']);
    expect(stepWindow(s2.next, ['toString'], hostile, spec(), t0).fires).toBe(true);
  });

  it('forgets results of an expired window', () => {
    const s1 = stepWindow(undefined, ['a'], names, spec(), t0);
    const s2 = stepWindow(s1.next, ['b'], names, spec(), new Date('2024-05-11T08:00:00Z'));
    expect(s2.fires).toBe(false);
    expect(s2.next?.results).toEqual({ b: true });
    expect(s2.next?.start).toBe('2024-05-11T00:00:00.000Z');
  });

  it('without resetOnSuccess keeps firing for matching events while all are met', () => {
    const s1 = stepWindow(undefined, ['a', 'b'], names, spec('P1D', 'PT0S', false), t0);
    expect(s1.fires).toBe(true);
    expect(stepWindow(s1.next, ['a'], names, spec('P1D', 'PT0S', false), t0).fires).toBe(true);
    expect(stepWindow(s1.next, [], names, spec('P1D', 'PT0S', false), t0).fires).toBe(false);
  });

  it('starts over when the window spec changed', () => {
    const s1 = stepWindow(undefined, ['a'], names, spec('P1D'), t0);
    expect(stepWindow(s1.next, ['b'], names, spec('PT12H'), t0).fires).toBe(false);
  });
});

describe('recordMultiple (durable, compare-and-set)', () => {
  const dirs: string[] = [];
  const open = (dir: string): EmbeddedStores => openEmbeddedStores(dir);
  afterEach(() => { for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true }); });
  const key = { namespace: 'ns', flowId: 'f', triggerId: 't', conditionId: 'multi' };
  const names = ['a', 'b', 'c'];

  it('survives reopening the store and expires with the injected clock', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'multi-'));
    dirs.push(dir);
    let now = new Date('2024-05-10T08:00:00Z');
    const clock = () => now;
    let stores = open(dir);
    expect(await recordMultiple(stores.triggers, key, ['a'], names, spec(), clock)).toBe(false);
    expect(await recordMultiple(stores.triggers, key, ['b'], names, spec(), clock)).toBe(false);
    await stores.close();

    stores = open(dir); // restart: a and b are still met
    now = new Date('2024-05-10T20:00:00Z');
    expect((await stores.triggers.get('ns', 'f', 't/multi'))?.state.window).toMatchObject({ results: { a: true, b: true } });
    expect(await recordMultiple(stores.triggers, key, ['c'], names, spec(), clock)).toBe(true);
    // Reset after firing: c alone does not fire again.
    expect(await recordMultiple(stores.triggers, key, ['c'], names, spec(), clock)).toBe(false);
    expect(await recordMultiple(stores.triggers, key, ['a', 'b'], names, spec(), clock)).toBe(true);

    // Expiry: a and b met today, c tomorrow → no fire.
    expect(await recordMultiple(stores.triggers, key, ['a', 'b'], names, spec(), clock)).toBe(false);
    now = new Date('2024-05-11T00:00:01Z');
    expect(await recordMultiple(stores.triggers, key, ['c'], names, spec(), clock)).toBe(false);
    await stores.close();
  });

  it('two concurrent evaluations completing the window fire once', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'multi-'));
    dirs.push(dir);
    const stores = open(dir);
    const clock = () => new Date('2024-05-10T08:00:00Z');
    await recordMultiple(stores.triggers, key, ['a', 'b'], names, spec(), clock);
    const fired = await Promise.all(Array.from({ length: 5 }, () => recordMultiple(stores.triggers, key, ['c'], names, spec(), clock)));
    expect(fired.filter(Boolean)).toHaveLength(1);
    expect((await stores.triggers.get('ns', 'f', 't/multi'))?.state.window).toMatchObject({ results: { c: true } });
    await stores.close();
  });
});
