// Graph routes (Kestra's shapes): a flow's FlowGraph (stored revision or a YAML body), an execution's graph with its task
// runs, a flow's or a namespace's dependencies (FlowTopologyGraph), and rollback of a flow to an older revision.
import type { Router, RouterContext } from '@koa/router';
import type { Execution, Flow } from '../../operator/core/types.js';
import { parseFlow } from '../../operator/model/index.js';
import { buildFlowGraph, subflowKey, type FlowGraph } from '../../operator/model/graph.js';
import { flowDependencies, namespaceDependencies, topologies, topologyGraph } from '../../operator/model/topology.js';
import type { ApiDeps } from '../deps.js';
import { badRequest, notFound } from '../errors.js';
import { queryBool, queryInt, queryList } from '../query.js';
import { getExecution } from './executions.js';
import { flowJson, readFlowSource } from './flows.js';

/**
 * The graph with the Subflow nodes named in `?subflows=` drawn as clusters of the flows they call, fetched round by
 * round (each expansion may name deeper ones); nesting stops at MAX_SUBFLOW_DEPTH.
 */
async function graphOf(deps: ApiDeps, ctx: RouterContext, flow: Flow, execution?: Execution): Promise<FlowGraph> {
  const expand = queryList(ctx, 'subflows');
  const maxSubflowDepth = deps.limits.maxSubflowDepth;
  const subflows = new Map<string, Flow>();
  const tried = new Set<string>();
  for (;;) {
    const { graph, missing } = buildFlowGraph(flow, { execution, expand, subflows, maxSubflowDepth });
    const toFetch = missing.filter((m) => m.ref && !tried.has(subflowKey(m.ref)));
    if (toFetch.length === 0) {
      const m = missing[0];
      if (!m) return graph;
      if (!m.ref) throw badRequest(`Task '${m.taskId}' calls a flow named by an expression: it cannot be expanded`, 'subflows');
      if (!subflows.has(subflowKey(m.ref))) {
        throw notFound(`Unable to find subflow ${m.ref.namespace}.${m.ref.flowId}${m.ref.revision ? ` revision ${m.ref.revision}` : ''} for task ${m.taskId}`);
      }
      throw badRequest(`Subflow '${m.uid}' is nested deeper than MAX_SUBFLOW_DEPTH (${maxSubflowDepth})`, 'subflows');
    }
    for (const m of toFetch) {
      const key = subflowKey(m.ref!);
      tried.add(key);
      const record = await deps.stores.flows.get(m.ref!.namespace, m.ref!.flowId, m.ref!.revision);
      if (record && (!record.deleted || m.ref!.revision)) subflows.set(key, record.flow);
    }
  }
}

async function dependencyData(deps: ApiDeps) {
  const flows = (await deps.stores.flows.all()).filter((r) => !r.deleted).map((r) => r.flow);
  return { flows, all: topologies(flows) };
}

/** Adds the graph, dependency and rollback routes to `r` (mounted under /api/v1). */
export function registerGraphRoutes(r: Router, deps: ApiDeps): void {
  r.get('/flows/:namespace/:id/graph', async (ctx) => {
    const { namespace, id } = ctx.params as { namespace: string; id: string };
    const revision = queryInt(ctx, 'revision', 1);
    const record = await deps.stores.flows.get(namespace, id, revision);
    if (!record || (record.deleted && revision === undefined)) {
      throw notFound(`Unable to find flow ${namespace}.${id}${revision ? ` revision ${revision}` : ''}`);
    }
    ctx.body = await graphOf(deps, ctx, record.flow);
  });

  r.post('/flows/graph', async (ctx) => {
    const { flow } = await readFlowSource(ctx, deps);
    ctx.body = await graphOf(deps, ctx, flow);
  });

  r.get('/executions/:executionId/graph', async (ctx) => {
    const { execution } = await getExecution(deps, ctx.params.executionId);
    const record = await deps.stores.flows.get(execution.namespace, execution.flowId, execution.flowRevision);
    if (!record) throw notFound(`Unable to find flow ${execution.namespace}.${execution.flowId} revision ${execution.flowRevision}`);
    ctx.body = await graphOf(deps, ctx, record.flow, execution);
  });

  r.get('/flows/:namespace/:id/dependencies', async (ctx) => {
    const { namespace, id } = ctx.params as { namespace: string; id: string };
    const { all } = await dependencyData(deps);
    ctx.body = topologyGraph(flowDependencies(all, namespace, id, {
      destinationOnly: queryBool(ctx, 'destinationOnly'),
      expandAll: queryBool(ctx, 'expandAll'),
    }));
  });

  r.get('/namespaces/:namespace/dependencies', async (ctx) => {
    const { flows, all } = await dependencyData(deps);
    ctx.body = namespaceDependencies(all, flows, ctx.params.namespace);
  });

  // Our addition (Kestra's UI saves the old source with PUT): a new revision with the source of an older one.
  r.post('/flows/:namespace/:id/revisions/:revision/rollback', async (ctx) => {
    const { namespace, id } = ctx.params as { namespace: string; id: string };
    const revision = Number(ctx.params.revision);
    if (!Number.isInteger(revision) || revision < 1) throw badRequest(`Invalid revision '${ctx.params.revision}': expected an integer >= 1`, 'revision');
    const latest = await deps.stores.flows.get(namespace, id);
    if (!latest || latest.deleted) throw notFound(`Flow '${namespace}.${id}' not found`);
    const old = await deps.stores.flows.get(namespace, id, revision);
    if (!old) throw notFound(`Flow '${namespace}.${id}' revision ${revision} not found`);
    const { record } = await deps.stores.flows.save(parseFlow(old.source), old.source);
    ctx.body = flowJson(record, true);
  });
}
