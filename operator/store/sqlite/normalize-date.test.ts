// normalizeDate (db.ts): dates stored for searches in toISOString() form; one already in that form is kept as is
// without a parse, and only when it names a real day and time (Date.parse rolls 02-30 over to 03-02).
import { describe, expect, it } from 'vitest';
import { normalizeDate } from './db.js';

describe('normalizeDate', () => {
  it.each([
    ['2026-11-25T03:24:53.000Z', '2026-11-25T03:24:53.000Z'],
    ['2024-02-29T00:00:00.000Z', '2024-02-29T00:00:00.000Z'],
    ['2000-02-29T23:59:59.999Z', '2000-02-29T23:59:59.999Z'],
    // Not real days or times in toISOString() form: what Date.parse makes of them, as before.
    ['2026-02-29T00:00:00.000Z', '2026-03-01T00:00:00.000Z'],
    ['2026-02-30T00:00:00.000Z', '2026-03-02T00:00:00.000Z'],
    ['1900-02-29T00:00:00.000Z', '1900-03-01T00:00:00.000Z'],
    ['2026-04-31T10:00:00.000Z', '2026-05-01T10:00:00.000Z'],
    ['2026-01-01T24:00:00.000Z', '2026-01-02T00:00:00.000Z'],
    // Other forms are normalized; what does not parse is kept.
    ['2026-11-25T03:24:53+01:00', '2026-11-25T02:24:53.000Z'],
    ['2026-11-25', '2026-11-25T00:00:00.000Z'],
    ['2026-01-01T23:60:00.000Z', '2026-01-01T23:60:00.000Z'],
    ['2026-13-01T00:00:00.000Z', '2026-13-01T00:00:00.000Z'],
    ['not a date', 'not a date'],
  ])('%s -> %s', (value, expected) => {
    expect(normalizeDate(value)).toBe(expected);
  });

  it('agrees with a parse and format on 20,000 random dates', () => {
    for (let i = 0; i < 20_000; i++) {
      const d = new Date(Math.floor(Math.random() * 4e12)).toISOString();
      expect(normalizeDate(d)).toBe(d);
    }
  });
});
