// A flow's graph (FlowGraph from the API) with a details panel: laid out once per graph, nodes coloured by the given
// task runs (an execution's, indexed by task id; a refresh re-colours, never re-lays out), a click shows the task
// (id, type, description, branch) and, for an execution, its task runs' states.
import { useMemo, useState } from 'react';
import type { FlowGraph, TaskRun } from '../../api';
import { formatDuration } from '../DateTime';
import { StateBadge } from '../StateBadge';
import { GraphView } from './GraphView';
import { layoutFlowGraph, type ModelNode } from './layout';
import { groupState, indexTaskRuns, nodeStates, type TaskRunIndex } from './states';

/** Task runs listed in the details panel for one task (a loop's other iterations are counted, not listed). */
export const RUNS_LISTED = 50;

export interface FlowGraphPanelProps {
  graph: FlowGraph;
  /** The accessible name of the drawing. */
  label: string;
  /** An execution's task runs: nodes show their states, details list them. Undefined for a flow's graph. */
  runs?: readonly TaskRun[];
  height?: number;
  /** Details under the drawing rather than beside it (a narrow place, e.g. the editor's side panel). */
  compact?: boolean;
}

const BRANCH_TEXT = { ERROR: 'errors branch', FINALLY: 'finally branch', AFTER_EXECUTION: 'after-execution branch' } as const;

function RunsOf({ taskId, index }: { taskId: string; index: TaskRunIndex }) {
  const group = index.get(taskId);
  const summary = groupState(group);
  if (!group || !summary) return <p className="muted">No task run for this task in this execution.</p>;
  const listed = group.runs.slice(0, RUNS_LISTED);
  return (
    <>
      <p className="row-gap" aria-label="Task run states">
        {Object.entries(summary.counts).map(([state, n]) => (
          <span key={state} className="row-gap"><StateBadge state={state} /> {n}</span>
        ))}
      </p>
      <div className="table-wrap">
        <table className="table" aria-label="Task runs">
          <thead><tr><th scope="col">Value</th><th scope="col">State</th><th scope="col" className="num">Attempts</th><th scope="col">Duration</th></tr></thead>
          <tbody>
            {listed.map((r) => (
              <tr key={r.id} data-task-run={r.id}>
                <td>{r.value ?? <span className="muted">–</span>}</td>
                <td><StateBadge state={r.state.current} /></td>
                <td className="num">{r.attempts?.length ?? 0}</td>
                <td>{formatDuration(r.state.duration)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      {group.runs.length > listed.length && <p className="muted">and {group.runs.length - listed.length} more task runs</p>}
    </>
  );
}

function Details({ node, index, onClose }: { node: ModelNode; index?: TaskRunIndex; onClose(): void }) {
  const decl = node.source?.task ?? node.source?.triggerDeclaration;
  return (
    <aside className="panel graph-details" aria-label="Task details">
      <div className="graph-details-head">
        <h2>{node.kind === 'trigger' ? 'Trigger' : 'Task'} <code>{node.taskId ?? node.label}</code></h2>
        <button type="button" aria-label="Close details" onClick={onClose}>×</button>
      </div>
      <dl className="graph-dl">
        <dt>Id</dt><dd><code>{node.taskId ?? node.label}</code></dd>
        <dt>Type</dt><dd><code>{node.type ?? '–'}</code></dd>
        {node.branch && (<><dt>Branch</dt><dd>{BRANCH_TEXT[node.branch]}</dd></>)}
        {typeof decl?.description === 'string' && (<><dt>Description</dt><dd>{decl.description}</dd></>)}
        {typeof decl?.cron === 'string' && (<><dt>Cron</dt><dd><code>{decl.cron}</code></dd></>)}
      </dl>
      {index && node.taskId && node.kind !== 'trigger' && (
        <section aria-label="Task runs of this task">
          <h2>Task runs</h2>
          <RunsOf taskId={node.taskId} index={index} />
        </section>
      )}
    </aside>
  );
}

export function FlowGraphPanel({ graph, label, runs, height, compact }: FlowGraphPanelProps) {
  const model = useMemo(() => layoutFlowGraph(graph), [graph]);
  const index = useMemo(() => (runs ? indexTaskRuns(runs) : undefined), [runs]);
  const states = useMemo(() => (index ? nodeStates(model, index) : undefined), [model, index]);
  const [selected, setSelected] = useState<string>();
  const node = selected ? model.nodes.find((n) => n.id === selected) : undefined;
  return (
    <div className={node ? (compact ? 'stack' : 'graph-with-details') : undefined}>
      <GraphView model={model} label={label} states={states} selected={selected} height={height}
        onSelect={(n) => setSelected((s) => (s === n.id ? undefined : n.id))} />
      {node && <Details node={node} index={index} onClose={() => setSelected(undefined)} />}
    </div>
  );
}
