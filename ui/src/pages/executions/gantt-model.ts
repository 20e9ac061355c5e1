// The Gantt's model, pure (no imports, unit-tested in test/ui/gantt-model.test.ts): task runs in tree order (children
// under their flowable parent, in creation order) with their depth, and per row the bars to draw: one per attempt, or
// the run's own span when it has none (flowables); times in ms since the execution's start, a running span ending at `now`.

export interface GanttState { current: string; startDate?: string; endDate?: string; histories?: { state: string; date: string }[] }
export interface GanttTaskRun {
  id: string; taskId: string; parentTaskRunId?: string; value?: string; state: GanttState; attempts?: { state: GanttState }[];
}

export interface GanttBar { start: number; end: number; state: string; attempt?: number }
export interface GanttRow { id: string; taskId: string; value?: string; depth: number; state: string; hasChildren: boolean; bars: GanttBar[] }
export interface GanttModel { rows: GanttRow[]; start: number; end: number }

const time = (iso: string | undefined): number | undefined => {
  if (!iso) return undefined;
  const t = Date.parse(iso);
  return Number.isNaN(t) ? undefined : t;
};

/** A state record's span: its start (or first history) to its end (or `now` while it runs). */
function span(s: GanttState, now: number): { start: number; end: number } | undefined {
  const start = time(s.startDate) ?? time(s.histories?.[0]?.date);
  if (start === undefined) return undefined;
  return { start, end: Math.max(start, time(s.endDate) ?? now) };
}

/**
 * Rows in tree order, without the children of `collapsed` runs; O(n) in the task runs. A run whose parent is not in
 * the list is a root (never dropped). `executionStart` anchors the axis (the earliest bar when absent).
 */
export function ganttModel(runs: GanttTaskRun[], now: number, executionStart?: string, collapsed: ReadonlySet<string> = new Set()): GanttModel {
  const ids = new Set(runs.map((r) => r.id));
  const children = new Map<string, GanttTaskRun[]>();
  const roots: GanttTaskRun[] = [];
  for (const r of runs) {
    if (r.parentTaskRunId && ids.has(r.parentTaskRunId) && r.parentTaskRunId !== r.id) {
      const list = children.get(r.parentTaskRunId);
      if (list) list.push(r); else children.set(r.parentTaskRunId, [r]);
    } else roots.push(r);
  }
  const rows: GanttRow[] = [];
  let min = time(executionStart) ?? Infinity;
  let max = -Infinity;
  const seen = new Set<string>();
  // Iterative depth-first walk (a deep nesting must not overflow the stack).
  // `hidden`: below a collapsed run (walked so that it is not mistaken for an orphan, drawn nowhere).
  const stack: { run: GanttTaskRun; depth: number; hidden?: boolean }[] = roots.slice().reverse().map((run) => ({ run, depth: 0 }));
  let orphan = 0; // runs in a parent cycle (a corrupt record) are walked as roots once the tree is done
  for (;;) {
    if (stack.length === 0) {
      while (orphan < runs.length && seen.has(runs[orphan]!.id)) orphan++;
      if (orphan === runs.length) break;
      stack.push({ run: runs[orphan]!, depth: 0 });
    }
    const { run, depth, hidden } = stack.pop()!;
    if (seen.has(run.id)) continue;
    seen.add(run.id);
    const kids = children.get(run.id) ?? [];
    if (hidden) {
      for (const k of kids) stack.push({ run: k, depth: depth + 1, hidden: true });
      continue;
    }
    const bars: GanttBar[] = [];
    const attempts = run.attempts ?? [];
    attempts.forEach((a, i) => {
      const s = span(a.state, now);
      if (s) bars.push({ ...s, state: a.state.current, attempt: i + 1 });
    });
    if (bars.length === 0) {
      const s = span(run.state, now);
      if (s) bars.push({ ...s, state: run.state.current });
    }
    for (const b of bars) { min = Math.min(min, b.start); max = Math.max(max, b.end); }
    rows.push({ id: run.id, taskId: run.taskId, value: run.value, depth, state: run.state.current, hasChildren: kids.length > 0, bars });
    const fold = collapsed.has(run.id);
    for (let i = kids.length - 1; i >= 0; i--) stack.push({ run: kids[i]!, depth: depth + 1, hidden: fold });
  }
  if (!Number.isFinite(min)) min = now;
  if (!Number.isFinite(max) || max < min) max = min;
  return { rows, start: min, end: Math.max(max, min + 1) };
}

/** About `count` round tick values (ms from the start) over `[0, length]`. */
export function ticks(length: number, count = 6): number[] {
  const raw = length / Math.max(1, count);
  const steps = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 15_000, 30_000, 60_000, 120_000, 300_000,
    600_000, 900_000, 1_800_000, 3_600_000, 7_200_000, 21_600_000, 43_200_000, 86_400_000];
  const step = steps.find((s) => s >= raw) ?? Math.ceil(raw / 86_400_000) * 86_400_000;
  const out: number[] = [];
  for (let t = 0; t <= length; t += step) out.push(t);
  return out;
}
