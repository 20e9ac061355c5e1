// ISO 8601 durations as used by Kestra (java.time.Duration): parse to milliseconds and format back.
// Accepted: P[nW][nD][T[nH][nM][n[.f]S]], case-insensitive, fractions on any unit; years/months are rejected (no fixed length).

const DURATION_RE =
  /^P(?:(\d+(?:[.,]\d+)?)W)?(?:(\d+(?:[.,]\d+)?)D)?(?:T(?:(\d+(?:[.,]\d+)?)H)?(?:(\d+(?:[.,]\d+)?)M)?(?:(\d+(?:[.,]\d+)?)S)?)?$/i;

const UNIT_MS = [7 * 86_400_000, 86_400_000, 3_600_000, 60_000, 1000] as const;

function match(iso: string): RegExpMatchArray | null {
  const m = DURATION_RE.exec(iso.trim());
  if (!m) return null;
  if (!m.slice(1).some((g) => g !== undefined)) return null; // "P" or "PT" alone
  if (/T$/i.test(iso.trim())) return null; // "P1DT": a T must be followed by a time part
  return m;
}

/** ISO 8601 duration → milliseconds ("PT0.25S" = 250). Throws on anything else. */
export function parseDuration(iso: string): number {
  const m = typeof iso === 'string' ? match(iso) : null;
  if (!m) throw new Error(`\`${String(iso)}\` is not an ISO 8601 duration (e.g. PT5S)`);
  let ms = 0;
  UNIT_MS.forEach((unit, i) => {
    const g = m[i + 1];
    if (g !== undefined) ms += Number(g.replace(',', '.')) * unit;
  });
  return Math.round(ms);
}

export function isDuration(s: unknown): boolean {
  return typeof s === 'string' && match(s) !== null;
}

/** Milliseconds → ISO 8601 like java.time.Duration.toString(): "PT1.5S", "PT25H1M", "PT0S". */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) throw new Error(`cannot format ${ms} as a duration`);
  const sign = ms < 0 ? '-' : '';
  let rest = Math.round(Math.abs(ms));
  const hours = Math.floor(rest / 3_600_000);
  rest -= hours * 3_600_000;
  const minutes = Math.floor(rest / 60_000);
  rest -= minutes * 60_000;
  const seconds = rest / 1000;
  let out = 'PT';
  if (hours) out += `${sign}${hours}H`;
  if (minutes) out += `${sign}${minutes}M`;
  if (seconds || (!hours && !minutes)) out += `${seconds ? sign : ''}${seconds}S`;
  return out;
}
