// A date shown in the browser's time zone (full ISO text on hover), or a dash when absent.
export function DateTime({ value }: { value?: string | null }) {
  if (!value) return <span className="muted">–</span>;
  const d = new Date(value);
  if (Number.isNaN(d.getTime())) return <span>{value}</span>;
  const text = d.toLocaleString(undefined, { year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit' });
  return <time dateTime={d.toISOString()} title={d.toISOString()}>{text}</time>;
}

/** A duration in ms or ISO-8601 (`PT1.5S`) as short text: `850 ms`, `12.3 s`, `4 min 5 s`, `2 h 3 min`. */
export function formatDuration(value: string | number | undefined | null): string {
  if (value === undefined || value === null || value === '') return '–';
  let ms = typeof value === 'number' ? value : NaN;
  if (typeof value === 'string') {
    const m = /^PT(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?$/.exec(value);
    if (m) ms = ((Number(m[1] ?? 0) * 60 + Number(m[2] ?? 0)) * 60 + Number(m[3] ?? 0)) * 1000;
  }
  if (!Number.isFinite(ms)) return String(value);
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const s = ms / 1000;
  if (s < 60) return `${s.toFixed(1)} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
  return `${Math.floor(s / 3600)} h ${Math.round((s % 3600) / 60)} min`;
}
