// Draws a laid-out graph (layout.ts's model) as one SVG: cluster boxes, edges with arrows (errors, finally and
// after-execution branches dashed and coloured, cases labelled), task cards with a type badge, optional task-run states;
// zoom (wheel, buttons), pan (drag) and fit. A node is a button: click or Enter selects it.
import { useCallback, useEffect, useLayoutEffect, useRef, useState, type KeyboardEvent, type PointerEvent } from 'react';
import type { GraphModel, ModelEdge, ModelNode, Point } from './layout';
import type { NodeState } from './states';

export interface GraphViewProps {
  model: GraphModel;
  /** The accessible name of the drawing (e.g. "Flow topology"). */
  label: string;
  states?: ReadonlyMap<string, NodeState>;
  selected?: string;
  /** A node drawn as the subject of the page (the flow whose dependencies are shown). */
  focus?: string;
  onSelect?(node: ModelNode): void;
  /** The largest height of the drawing (it is shorter when the graph is). */
  height?: number;
}

interface View { k: number; x: number; y: number }
const MIN_ZOOM = 0.1;
const MAX_ZOOM = 3;
const clamp = (k: number) => Math.min(MAX_ZOOM, Math.max(MIN_ZOOM, k));

/** Below this zoom a card's text is unreadable: the first view stops there (and can be panned); Fit goes further. */
const READABLE_ZOOM = 0.6;

/** The view that shows the whole model in a `width` x `height` viewport, never enlarged past 1.2. */
export function fitView(model: GraphModel, width: number, height: number): View {
  if (model.width <= 0 || model.height <= 0 || width <= 0 || height <= 0) return { k: 1, x: 0, y: 0 };
  const k = clamp(Math.min(width / model.width, height / model.height, 1.2));
  return { k, x: (width - model.width * k) / 2, y: (height - model.height * k) / 2 };
}

/** The first view: the whole model when it is readable so, else the readable zoom from the start (left), centred. */
export function initialView(model: GraphModel, width: number, height: number): View {
  const fit = fitView(model, width, height);
  if (fit.k >= READABLE_ZOOM) return fit;
  return { k: READABLE_ZOOM, x: 8, y: Math.max(8, (height - model.height * READABLE_ZOOM) / 2) };
}

/** The view moved (same zoom) so that `n` is inside the viewport, centred on it when it was not. */
export function reveal(v: View, n: ModelNode, width: number, height: number): View {
  const left = v.x + (n.x - n.width / 2) * v.k;
  const top = v.y + (n.y - n.height / 2) * v.k;
  const visible = left >= 0 && top >= 0 && left + n.width * v.k <= width && top + n.height * v.k <= height;
  return visible ? v : { k: v.k, x: width / 2 - n.x * v.k, y: height / 2 - n.y * v.k };
}

/** The drawing's height: the model's own at most, within [220, `max`]. */
export const viewHeight = (model: GraphModel, max: number): number => Math.round(Math.min(max, Math.max(220, model.height + 48)));

/** A rounded polyline through dagre's points (a quadratic curve at each bend). */
export function edgePath(points: Point[]): string {
  if (points.length === 0) return '';
  const f = (n: number) => Math.round(n * 10) / 10;
  let d = `M${f(points[0].x)},${f(points[0].y)}`;
  for (let i = 1; i < points.length - 1; i++) {
    const mid = { x: (points[i].x + points[i + 1].x) / 2, y: (points[i].y + points[i + 1].y) / 2 };
    d += ` Q${f(points[i].x)},${f(points[i].y)} ${f(mid.x)},${f(mid.y)}`;
  }
  const last = points[points.length - 1];
  return `${d} L${f(last.x)},${f(last.y)}`;
}

const truncate = (s: string, max: number) => (s.length > max ? `${s.slice(0, max - 1)}…` : s);

/** Two letters standing for a task type (its short name's capitals, e.g. `EachSequential` -> `ES`, `Log` -> `Lo`). */
export const typeInitials = (typeLabel: string): string => {
  const caps = typeLabel.replace(/[^A-Z]/g, '');
  return caps.length >= 2 ? caps.slice(0, 2) : typeLabel.slice(0, 2);
};

/** A type's family (the segment before its short name: `flow`, `log`, `scripts`...) picks the badge colour. */
export const typeFamily = (type: string | undefined): string => {
  const parts = (type ?? '').split('.');
  return parts.length >= 2 ? parts[parts.length - 2] : '';
};

const CARD_KINDS = new Set<ModelNode['kind']>(['task', 'subflow', 'trigger', 'flow']);
const BRANCH_NAME: Record<string, string> = { ERROR: 'errors', FINALLY: 'finally', AFTER_EXECUTION: 'after execution' };

function nodeName(n: ModelNode, state?: NodeState): string {
  const what = n.kind === 'flow' ? `Flow ${n.typeLabel}.${n.label}` : n.kind === 'trigger' ? `Trigger ${n.label}` : `Task ${n.label}`;
  const type = n.typeLabel && n.kind !== 'flow' ? ` (${n.typeLabel})` : '';
  const branch = n.branch ? `, ${BRANCH_NAME[n.branch]}` : '';
  const st = state ? `, ${state.state}${state.count > 1 ? ` (${state.count} runs)` : ''}` : '';
  return `${what}${type}${branch}${st}`;
}

function Card({ n, state, selected, focus, onSelect }: { n: ModelNode; state?: NodeState; selected: boolean; focus: boolean; onSelect?(n: ModelNode): void }) {
  const left = n.x - n.width / 2;
  const top = n.y - n.height / 2;
  const select = () => onSelect?.(n);
  const onKey = (e: KeyboardEvent) => { if (e.key === 'Enter' || e.key === ' ') { e.preventDefault(); select(); } };
  const classes = ['g-node', `g-${n.kind}`, n.branch ? `g-branch-${n.branch}` : '', state ? `g-state g-state-${state.state}` : '', selected ? 'g-selected' : '', focus ? 'g-focus' : '']
    .filter(Boolean).join(' ');
  return (
    <g className={classes} data-uid={n.id} data-kind={n.kind} data-state={state?.state} transform={`translate(${left},${top})`}
      role="button" tabIndex={0} aria-label={nodeName(n, state)} aria-pressed={selected} onClick={select} onKeyDown={onKey}>
      <title>{n.type ?? n.label}</title>
      <rect className="g-card" width={n.width} height={n.height} rx={6} />
      <rect className={`g-icon g-family-${typeFamily(n.type) || 'other'}`} x={8} y={(n.height - 26) / 2} width={26} height={26} rx={5} />
      <text className="g-icon-text" x={21} y={n.height / 2 + 4} textAnchor="middle">{n.kind === 'flow' ? 'F' : typeInitials(n.typeLabel ?? '?')}</text>
      <text className="g-label" x={42} y={21}>{truncate(n.label, 21)}</text>
      <text className="g-sub" x={42} y={37}>
        {truncate(n.kind === 'trigger' ? `trigger · ${n.typeLabel ?? ''}` : n.typeLabel ?? '', state ? 14 : 24)}
        {n.branch ? ` · ${BRANCH_NAME[n.branch]}` : ''}
      </text>
      {state && (
        <text className="g-state-text" x={n.width - 8} y={37} textAnchor="end">
          {state.count > 1 ? `${state.state} ×${state.count}` : state.state}
        </text>
      )}
    </g>
  );
}

function Marker({ n }: { n: ModelNode }) {
  if (n.kind === 'start' || n.kind === 'end') {
    return <circle className={`g-node g-${n.kind}${n.branch ? ` g-branch-${n.branch}` : ''}`} data-uid={n.id} data-kind={n.kind} cx={n.x} cy={n.y} r={n.width / 2} />;
  }
  return (
    <g className={`g-node g-${n.kind}`} data-uid={n.id} data-kind={n.kind}>
      <rect className="g-pill" x={n.x - n.width / 2} y={n.y - n.height / 2} width={n.width} height={n.height} rx={n.height / 2} />
      <text className="g-pill-text" x={n.x} y={n.y + 4} textAnchor="middle">{n.label}</text>
    </g>
  );
}

function Edge({ e }: { e: ModelEdge }) {
  const mid = e.points[Math.floor(e.points.length / 2)];
  return (
    <g className={`g-edge g-edge-${e.kind}`} data-edge={e.id} data-kind={e.kind}>
      <path d={edgePath(e.points)} markerEnd={`url(#g-arrow-${e.kind === 'ERROR' ? 'error' : e.kind === 'FINALLY' || e.kind === 'AFTER_EXECUTION' ? 'finally' : 'plain'})`} />
      {e.label && mid && (
        <text className="g-edge-label" x={mid.x} y={mid.y - 4} textAnchor="middle">{e.label}</text>
      )}
    </g>
  );
}

export function GraphView({ model, label, states, selected, focus, onSelect, height: maxHeight = 600 }: GraphViewProps) {
  const box = useRef<HTMLDivElement>(null);
  const svg = useRef<SVGSVGElement>(null);
  const height = viewHeight(model, maxHeight);
  const [size, setSize] = useState({ width: 0, height });
  const [view, setView] = useState<View>({ k: 1, x: 0, y: 0 });
  const fitted = useRef<GraphModel | undefined>(undefined);
  // Until the user zooms or pans, the view follows the model and the viewport (e.g. a details panel opening).
  const auto = useRef(true);
  const drag = useRef<{ x: number; y: number; view: View } | undefined>(undefined);

  useLayoutEffect(() => {
    const el = box.current;
    if (!el) return undefined;
    const measure = () => setSize({ width: el.clientWidth, height });
    measure();
    const ro = new ResizeObserver(measure);
    ro.observe(el);
    return () => ro.disconnect();
  }, [height]);

  const fit = useCallback(() => { auto.current = true; setView(fitView(model, size.width, size.height)); }, [model, size]);
  // A new model (not a state refresh: the model stays) or a resized viewport resets the view, unless the user moved
  // it; the selected node is brought into view (a details panel opening narrows the drawing).
  useEffect(() => {
    if (size.width <= 0) return;
    if (fitted.current !== model) auto.current = true;
    fitted.current = model;
    const node = selected ? model.nodes.find((n) => n.id === selected) : undefined;
    setView((v) => {
      const base = auto.current ? initialView(model, size.width, size.height) : v;
      return node ? reveal(base, node, size.width, size.height) : base;
    });
  }, [model, size, selected]);

  const zoomAt = useCallback((factor: number, cx: number, cy: number) => {
    auto.current = false;
    setView((v) => {
      const k = clamp(v.k * factor);
      return { k, x: cx - ((cx - v.x) * k) / v.k, y: cy - ((cy - v.y) * k) / v.k };
    });
  }, []);

  useEffect(() => {
    const el = svg.current;
    if (!el) return undefined;
    const onWheel = (e: WheelEvent) => {
      e.preventDefault();
      const r = el.getBoundingClientRect();
      zoomAt(Math.exp(-e.deltaY * 0.0015), e.clientX - r.left, e.clientY - r.top);
    };
    el.addEventListener('wheel', onWheel, { passive: false });
    return () => el.removeEventListener('wheel', onWheel);
  }, [zoomAt]);

  const onPointerDown = (e: PointerEvent<SVGSVGElement>) => {
    if ((e.target as Element).closest('[role=button]')) return;
    auto.current = false;
    drag.current = { x: e.clientX, y: e.clientY, view };
    (e.target as Element).setPointerCapture?.(e.pointerId);
  };
  const onPointerMove = (e: PointerEvent<SVGSVGElement>) => {
    const d = drag.current;
    if (d) setView({ ...d.view, x: d.view.x + e.clientX - d.x, y: d.view.y + e.clientY - d.y });
  };
  const endDrag = () => { drag.current = undefined; };

  const tasks = model.nodes.filter((n) => CARD_KINDS.has(n.kind));
  const markers = model.nodes.filter((n) => !CARD_KINDS.has(n.kind));
  const clusters = [...model.clusters].sort((a, b) => a.depth - b.depth);
  return (
    <div className="graph" ref={box}>
      <div className="graph-tools" role="toolbar" aria-label={`${label} controls`}>
        <button type="button" aria-label="Zoom in" onClick={() => zoomAt(1.25, size.width / 2, size.height / 2)}>+</button>
        <button type="button" aria-label="Zoom out" onClick={() => zoomAt(0.8, size.width / 2, size.height / 2)}>−</button>
        <button type="button" aria-label="Fit to view" onClick={fit}>Fit</button>
        <span className="muted graph-zoom" aria-live="polite">{Math.round(view.k * 100)}%</span>
      </div>
      <svg ref={svg} role="group" aria-label={label} width="100%" height={size.height} className="graph-svg"
        onPointerDown={onPointerDown} onPointerMove={onPointerMove} onPointerUp={endDrag} onPointerCancel={endDrag}
        data-nodes={model.nodes.length} data-edges={model.edges.length} data-clusters={model.clusters.length}>
        <defs>
          {(['plain', 'error', 'finally'] as const).map((m) => (
            <marker key={m} id={`g-arrow-${m}`} className={`g-arrow g-arrow-${m}`} viewBox="0 0 10 10" refX={9} refY={5}
              markerWidth={7} markerHeight={7} orient="auto-start-reverse">
              <path d="M0,0 L10,5 L0,10 z" />
            </marker>
          ))}
        </defs>
        <g transform={`translate(${view.x},${view.y}) scale(${view.k})`}>
          {clusters.map((c) => (
            <g key={c.id} className={`g-cluster${c.branch ? ` g-branch-${c.branch}` : ''}`} data-cluster={c.id} data-relation={c.relation}>
              <rect x={c.x - c.width / 2} y={c.y - c.height / 2} width={c.width} height={c.height} rx={8} />
              <text className="g-cluster-label" x={c.x - c.width / 2 + 6} y={c.y - c.height / 2 - 4}>
                {truncate(c.label, Math.max(8, Math.floor(c.width / 7)))}
              </text>
            </g>
          ))}
          {model.edges.map((e) => <Edge key={e.id} e={e} />)}
          {markers.map((n) => <Marker key={n.id} n={n} />)}
          {tasks.map((n) => <Card key={n.id} n={n} state={states?.get(n.id)} selected={selected === n.id} focus={focus === n.id} onSelect={onSelect} />)}
        </g>
      </svg>
    </div>
  );
}
