// A stacked bar chart of counts per day by state, drawn as SVG (no chart library): one bar per day, one segment per
// state in `order` (failures first, at the base), each bar titled with its counts for pointer and screen readers.
export interface DayCounts { day: string; counts: Record<string, number> }

const WIDTH = 960;
const HEIGHT = 220;
const AXIS = 28;
const TOP = 10;

/** The CSS classes giving a state's fill colour (styles.css `.bar-{STATE}`, shared with the Gantt bars). */
const barClass = (state: string): string => `bar bar-${state}`;

export function StateBarChart({ days, order, label }: { days: DayCounts[]; order: string[]; label: string }) {
  const totals = days.map((d) => order.reduce((n, s) => n + (d.counts[s] ?? 0), 0));
  const max = Math.max(1, ...totals);
  const slot = (WIDTH - AXIS) / Math.max(1, days.length);
  const barWidth = Math.max(2, Math.min(40, slot * 0.7));
  const plotHeight = HEIGHT - TOP - 20;
  const y = (v: number): number => TOP + plotHeight - (v / max) * plotHeight;
  const labelEvery = Math.max(1, Math.ceil(days.length / 12));
  // The legend names the states drawn (all of `order` when nothing is).
  const drawn = order.filter((s) => days.some((d) => (d.counts[s] ?? 0) > 0));
  return (
    <figure className="chart">
      <svg viewBox={`0 0 ${WIDTH} ${HEIGHT}`} role="img" aria-label={label} className="chart-svg">
        <line x1={AXIS} y1={y(0)} x2={WIDTH} y2={y(0)} className="axis" />
        <text x={AXIS - 4} y={y(max) + 4} className="axis-label" textAnchor="end">{max}</text>
        <text x={AXIS - 4} y={y(0)} className="axis-label" textAnchor="end">0</text>
        {days.map((d, i) => {
          const x = AXIS + i * slot + (slot - barWidth) / 2;
          let base = 0;
          const parts = order.filter((s) => (d.counts[s] ?? 0) > 0);
          const title = `${d.day}: ${parts.length ? parts.map((s) => `${s} ${d.counts[s]}`).join(', ') : 'no executions'}`;
          return (
            <g key={d.day} data-day={d.day}>
              <title>{title}</title>
              {parts.map((s) => {
                const v = d.counts[s] ?? 0;
                const rect = <rect key={s} x={x} width={barWidth} y={y(base + v)} height={Math.max(0, y(base) - y(base + v))} className={barClass(s)} />;
                base += v;
                return rect;
              })}
              {i % labelEvery === 0 && <text x={x + barWidth / 2} y={HEIGHT - 4} className="axis-label" textAnchor="middle">{d.day.slice(5)}</text>}
            </g>
          );
        })}
      </svg>
      <figcaption className="legend">
        {(drawn.length ? drawn : order).map((s) => <span key={s} className="legend-item"><svg width="10" height="10" aria-hidden="true"><rect width="10" height="10" className={barClass(s)} /></svg> {s}</span>)}
      </figcaption>
    </figure>
  );
}
