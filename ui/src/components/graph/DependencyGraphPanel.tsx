// Flow dependencies (Kestra's FlowTopologyGraph) as a graph: one card per flow, edges labelled `subflow` (a Subflow or
// ForEachItem call) or `flow trigger` (a Flow trigger listening), with the page's flow marked; a click shows the
// flow's relations in both directions and a link to it.
import { useMemo, useState } from 'react';
import { Link } from 'react-router';
import type { FlowTopologyGraph } from '../../api';
import { EmptyState } from '../EmptyState';
import { GraphView } from './GraphView';
import { layoutTopology } from './layout';
import { flowPath } from '../../paths';

/** Kestra's node uid of a flow (tenant `main`). */
export const flowUid = (namespace: string, id: string): string => `main_${namespace}_${id}`;

const RELATION = { FLOW_TASK: 'subflow', FLOW_TRIGGER: 'flow trigger' } as const;

export function DependencyGraphPanel({ graph, label, focus, height }: {
  graph: FlowTopologyGraph; label: string; focus?: { namespace: string; id: string }; height?: number;
}) {
  const model = useMemo(() => layoutTopology(graph), [graph]);
  const [selected, setSelected] = useState<string>();
  const byUid = useMemo(() => new Map(graph.nodes.map((n) => [n.uid, n])), [graph]);
  const node = selected ? byUid.get(selected) : undefined;
  if (graph.nodes.length === 0) return <EmptyState title="No dependencies: no flow calls or triggers another here" />;
  const name = (uid: string) => { const n = byUid.get(uid); return n ? `${n.namespace}.${n.id}` : uid; };
  const out = node ? graph.edges.filter((e) => e.source === node.uid) : [];
  const inc = node ? graph.edges.filter((e) => e.target === node.uid) : [];
  return (
    <div className={node ? 'graph-with-details' : undefined}>
      <GraphView model={model} label={label} height={height} selected={selected}
        focus={focus ? flowUid(focus.namespace, focus.id) : undefined}
        onSelect={(n) => setSelected((s) => (s === n.id ? undefined : n.id))} />
      {node && (
        <aside className="panel graph-details" aria-label="Flow details">
          <div className="graph-details-head">
            <h2>Flow <code>{node.namespace}.{node.id}</code></h2>
            <button type="button" aria-label="Close details" onClick={() => setSelected(undefined)}>×</button>
          </div>
          <p><Link to={flowPath(node.namespace, node.id, 'dependencies')}>Open this flow</Link></p>
          <h2>Downstream</h2>
          {out.length === 0 ? <p className="muted">None.</p> : (
            <ul aria-label="Downstream flows">{out.map((e, i) => <li key={i}>{RELATION[e.relation]} → <code>{name(e.target)}</code></li>)}</ul>
          )}
          <h2>Upstream</h2>
          {inc.length === 0 ? <p className="muted">None.</p> : (
            <ul aria-label="Upstream flows">{inc.map((e, i) => <li key={i}><code>{name(e.source)}</code> → {RELATION[e.relation]}</li>)}</ul>
          )}
        </aside>
      )}
    </div>
  );
}
