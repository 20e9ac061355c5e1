// Tests of ISO 8601 duration parsing and formatting.
import { describe, expect, it } from 'vitest';
import { formatDuration, isDuration, parseDuration } from './duration.js';

describe('parseDuration', () => {
  it.each([
    ['PT0.25S', 250], ['PT5S', 5000], ['PT1M', 60_000], ['PT1H30M', 5_400_000], ['P1D', 86_400_000],
    ['P1DT2H', 93_600_000], ['P2W', 14 * 86_400_000], ['PT0S', 0], ['pt10s', 10_000], ['PT1,5S', 1500],
    ['PT1.5H', 5_400_000], ['PT36H', 129_600_000], [' PT2S ', 2000],
  ])('%s = %i ms', (iso, ms) => {
    expect(parseDuration(iso)).toBe(ms);
    expect(isDuration(iso)).toBe(true);
  });

  it.each(['', 'P', 'PT', 'P1DT', '5 seconds', 'PT5', '5S', 'P1Y', 'P1M', 'PT-5S', 'PT1S2M', 'abc'])('rejects %j', (s) => {
    expect(isDuration(s)).toBe(false);
    expect(() => parseDuration(s)).toThrow(/not an ISO 8601 duration/);
  });

  it.each([undefined, null, 5, {}])('isDuration(%j) is false', (v) => expect(isDuration(v)).toBe(false));
});

describe('formatDuration', () => {
  it.each([
    [0, 'PT0S'], [250, 'PT0.25S'], [1500, 'PT1.5S'], [60_000, 'PT1M'], [5_400_000, 'PT1H30M'],
    [86_400_000, 'PT24H'], [90_061_000, 'PT25H1M1S'], [3_600_001, 'PT1H0.001S'],
  ])('%i ms = %s', (ms, iso) => {
    expect(formatDuration(ms)).toBe(iso);
    expect(parseDuration(iso)).toBe(ms);
  });
});
