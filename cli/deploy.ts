// `flow deploy`: syncs a folder of flows to a server, namespace by namespace. Every flow is validated offline first
// (nothing is sent when one is invalid); the plan (create, update, unchanged, delete) is read from the server; the
// plan is then applied flow by flow with the flow routes, so each source is stored exactly as written and a revision
// is made only where it changed. `--dry-run` prints the plan and changes nothing.
import type { ApiClient } from './client.js';
import { CliError } from './errors.js';
import type { CheckedDocument } from './validate.js';

export const DeployActions = ['create', 'update', 'unchanged', 'delete'] as const;
export type DeployAction = (typeof DeployActions)[number];

export interface PlannedFlow {
  action: DeployAction;
  namespace: string;
  id: string;
  /** The revision on the server before (update, unchanged, delete) and after (create, update, unchanged) the deploy. */
  previousRevision?: number;
  revision?: number;
  file?: string;
}

interface Local { namespace: string; id: string; source: string; file: string }

/** The flows of the checked documents, grouped by namespace; `namespace` (when given) must be theirs. */
function groupFlows(docs: CheckedDocument[], namespace: string | undefined): Map<string, Local[]> {
  const groups = new Map<string, Local[]>();
  if (namespace) groups.set(namespace, []);
  for (const d of docs) {
    if (d.skipped) continue;
    const where = `${d.file}:${d.line}`;
    if (namespace && d.namespace !== namespace) {
      throw new CliError(`${where}: flow ${d.namespace}.${d.id} is not in namespace '${namespace}': move it to its own folder or drop --namespace`);
    }
    const list = groups.get(d.namespace!) ?? [];
    const twin = list.find((l) => l.id === d.id);
    if (twin) throw new CliError(`${where}: flow ${d.namespace}.${d.id} is also defined in ${twin.file}: keep one of them`);
    list.push({ namespace: d.namespace!, id: d.id!, source: d.source, file: where });
    groups.set(d.namespace!, list);
  }
  return groups;
}

/** What a deploy of `docs` would do on the server. */
export async function planDeploy(client: ApiClient, docs: CheckedDocument[], opts: { namespace?: string; delete: boolean }): Promise<Map<string, PlannedFlow[]>> {
  const plans = new Map<string, PlannedFlow[]>();
  for (const [namespace, locals] of groupFlows(docs, opts.namespace)) {
    const live = await client.json<{ id: string; revision: number }[]>('GET', `/flows/${encodeURIComponent(namespace)}`);
    const byId = new Map(live.map((f) => [f.id, f]));
    const plan: PlannedFlow[] = [];
    for (const l of locals) {
      const current = byId.get(l.id);
      if (!current) { plan.push({ action: 'create', namespace, id: l.id, file: l.file }); continue; }
      const stored = await client.json<{ source?: string; revision: number }>('GET', `/flows/${encodeURIComponent(namespace)}/${encodeURIComponent(l.id)}`, { query: { source: true } });
      const same = stored.source === l.source;
      plan.push({ action: same ? 'unchanged' : 'update', namespace, id: l.id, previousRevision: stored.revision, ...(same ? { revision: stored.revision } : {}), file: l.file });
    }
    if (opts.delete) {
      const kept = new Set(locals.map((l) => l.id));
      for (const f of live) if (!kept.has(f.id)) plan.push({ action: 'delete', namespace, id: f.id, previousRevision: f.revision });
    }
    plans.set(namespace, plan);
  }
  return plans;
}

/** Applies the plan, flow by flow (create: POST /flows, update: PUT, delete: DELETE); returns it with the revisions made. */
export async function applyDeploy(client: ApiClient, docs: CheckedDocument[], plans: Map<string, PlannedFlow[]>): Promise<PlannedFlow[]> {
  const sources = new Map<string, string>();
  for (const list of groupFlows(docs, undefined).values()) for (const l of list) sources.set(`${l.namespace}\u0000${l.id}`, l.source);
  const out: PlannedFlow[] = [];
  for (const plan of plans.values()) {
    for (const p of plan) {
      const path = `/flows/${encodeURIComponent(p.namespace)}/${encodeURIComponent(p.id)}`;
      const body = sources.get(`${p.namespace}\u0000${p.id}`);
      if (p.action === 'create') {
        const saved = await client.json<{ revision: number }>('POST', '/flows', { body, contentType: 'application/x-yaml' });
        out.push({ ...p, revision: saved.revision });
      } else if (p.action === 'update') {
        const saved = await client.json<{ revision: number }>('PUT', path, { body, contentType: 'application/x-yaml' });
        out.push({ ...p, revision: saved.revision });
      } else if (p.action === 'delete') {
        await client.raw('DELETE', path);
        out.push(p);
      } else out.push(p);
    }
  }
  return out;
}
