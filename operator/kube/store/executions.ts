// ExecutionStore on Execution custom resources: the API creates them and appends commands to spec (JSON patch), the
// operator writes status (one conditional PUT on /status per update). Reads come from the informer cache.
// resourceVersion is the Kubernetes resourceVersion as a number (an etcd revision, a decimal string on real servers).
// With an archive (finished executions moved to PostgreSQL, their resources deleted after a TTL), reads fall back to
// it: get, search (live and archived merged), restart of an archived execution (re-created from its record, or its
// resource made live again when it still exists). With an archive the informer holds only live resources: the sweeper
// labels archived ones (LABELS.archived) and the cache lists/watches without them and never admits them otherwise.
import type { KubeConfig } from '@kubernetes/client-node';
import { type Execution, type ExecutionState, isTerminal } from '../../core/types.js';
import { Emitter } from '../../store/sqlite/emitter.js';
import {
  ConflictError, type DailyStatsQuery, type DailyStatsRow, type ExecutionCommand, type ExecutionQuery, type ExecutionStore,
  type ExecutionSummary, type Page, type PendingCommand, type StoredExecution, type WatchEvent, summaryOf,
} from '../../store/types.js';
import { DailyStatsAccumulator, startsWithin } from '../../store/daily-stats.js';
import { archiveWindow, mergePage, newestFirst } from '../archive/order.js';
import type { ExecutionArchive } from '../archive/types.js';
import { KINDS, LABELS, executionName } from '../names.js';
import { type CacheEvent, type CacheOptions, KubeCache } from './cache.js';
import {
  type ExecutionObject, ackedOf, commandSpec, decodeExecution, executionIdOf, executionResource, executionStatus,
  pendingOf, toPending,
} from './execution-codec.js';
import { executionRow, rowMatches } from '../../store/filters.js';
import { ANNOTATIONS } from './labels.js';
import { type JsonPatchOp, KindApi, LIST_PAGE, apiMessage, isConflict, retrying, rvNumber, statusCode } from './kube-api.js';
import { MissReads } from './read-through.js';

/** Flow namespace `ns` or one of its children (dotted segments). */
export const inNamespace = (value: string, ns: string): boolean => value === ns || value.startsWith(`${ns}.`);

const dateMs = (s: string | undefined): number => (s ? Date.parse(s) : NaN);
/** Executions whose record is in the archive (the sweeper's scan for expired ones) and the rest (the informer's). */
export const ARCHIVED_SELECTOR = `${LABELS.archived}=true`;
export const LIVE_SELECTOR = `!${LABELS.archived}`;
/** Labelled archived: out of the executions cache (the same condition as LIVE_SELECTOR). */
export const isArchivedResource = (o: { metadata: { labels?: Record<string, string> } }): boolean =>
  o.metadata.labels?.[LABELS.archived] !== undefined;
/** JSON pointer of the archived label (RFC 6901: '/' is written '~1'). */
const ARCHIVED_LABEL_PATH = `/metadata/labels/${LABELS.archived.replace(/~/g, '~0').replace(/\//g, '~1')}`;

/** A Kubernetes object name (DNS subdomain): what the id of an Execution made with kubectl is. */
const RESOURCE_NAME = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export class KubeExecutionStore implements ExecutionStore {
  readonly cache: KubeCache<ExecutionObject>;
  private readonly api: KindApi<ExecutionObject>;
  private readonly changes = new Emitter<WatchEvent>('execution watch');
  private readonly commands = new Emitter<PendingCommand>('execution command');
  /** Decoded records by resource name, valid for one resourceVersion (records may be gzip'd). */
  private readonly decoded = new Map<string, { rv: number; execution: Execution | undefined }>();
  /** Highest command seq announced to onCommand listeners, by resource name. */
  private readonly announced = new Map<string, number>();
  /** Names whose record has been announced (ADDED) to watchers. */
  private readonly visible = new Set<string>();

  /** Direct reads behind cache misses (an id created by another process, not yet watched), bounded. */
  readonly misses: MissReads;

  constructor(kc: KubeConfig, namespace: string, opts: CacheOptions = {}, readonly archive?: ExecutionArchive, misses = new MissReads()) {
    this.misses = misses;
    this.api = new KindApi<ExecutionObject>(kc, KINDS.Execution, namespace);
    // Only with an archive: without one an archived resource could not be read at all.
    this.cache = new KubeCache(kc, this.api, archive ? { ...opts, labelSelector: LIVE_SELECTOR, admit: (o) => !isArchivedResource(o) } : opts);
    this.cache.addIndex('id', (o) => [executionIdOf(o)]);
    this.cache.on((e) => this.onCacheEvent(e));
  }

  async create(execution: Execution): Promise<StoredExecution> {
    await this.cache.ready();
    const known = this.find(execution.id);
    const existing = known && this.stored(known);
    if (existing) return existing;
    if (!known && this.archive) {
      const archived = await this.archive.get(execution.id);
      if (archived) return { execution: archived, resourceVersion: 0 };
    }
    const { body, needsStatus } = executionResource(execution);
    let obj: ExecutionObject;
    try {
      obj = await this.api.create(this.api.body(body));
    } catch (err) {
      if (!isConflict(err)) throw err;
      const existing = await this.cache.refresh(body.metadata.name);
      if (!existing) throw new Error(`Execution '${execution.id}' exists and vanished while being read: ${apiMessage(err)}`);
      if (executionIdOf(existing) !== execution.id) {
        throw new Error(`Execution resource '${body.metadata.name}' already holds execution '${executionIdOf(existing)}', not '${execution.id}'`);
      }
      const stored = this.stored(existing);
      if (stored) return stored;
      obj = existing; // created by an earlier call that stopped before writing its status: complete it
    }
    this.cache.observe(obj);
    if (!needsStatus && !obj.metadata.annotations?.[ANNOTATIONS.statusPending]) return this.stored(obj)!;
    const status = await executionStatus(execution, 0, obj.metadata.generation);
    let written: ExecutionObject;
    try {
      written = await this.api.replaceStatus({ ...obj, status });
    } catch (err) {
      // Only the operator may write status: from the API a record this large cannot be created. Leave nothing behind.
      if (statusCode(err) !== 403) throw err;
      await this.api.delete(obj.metadata.name).catch(() => undefined);
      const message = `Execution '${execution.id}' is too large to create from here (${JSON.stringify(execution).length} bytes of record): ${apiMessage(err)}`;
      throw Object.assign(new Error(message), { status: 413 }); // the API answers 413 Payload Too Large
    }
    this.cache.observe(written);
    return { execution, resourceVersion: rvNumber(written) };
  }

  async get(id: string): Promise<StoredExecution | undefined> {
    await this.cache.ready();
    const cached = this.find(id);
    if (cached) return this.stored(cached);
    // Not in the cache: on the server (created by another process, not yet watched), else in the archive; bounded.
    const found = await this.misses.read<{ obj: ExecutionObject } | { archived: Execution }>(id, async () => {
      const obj = await this.readById(id);
      if (obj) return { obj };
      const archived = await this.archive?.get(id);
      return archived && { archived };
    });
    if (!found) return undefined;
    if ('obj' in found) return executionIdOf(found.obj) === id ? this.stored(found.obj) : undefined;
    return { execution: structuredClone(found.archived), resourceVersion: 0 };
  }

  /** An execution not in the cache, from the server: its deterministic name, else (made with kubectl) the id as name. */
  private async readById(id: string): Promise<ExecutionObject | undefined> {
    const byName = await this.cache.refresh(executionName(id));
    if (byName && executionIdOf(byName) === id) return byName;
    if (!RESOURCE_NAME.test(id) || id === executionName(id)) return undefined;
    const handMade = await this.cache.refresh(id);
    return handMade && executionIdOf(handMade) === id ? handMade : undefined;
  }

  async update(execution: Execution, expected: number, ackCommands: number[] = []): Promise<StoredExecution> {
    await this.cache.ready();
    let obj = this.find(execution.id);
    // resourceVersions only grow: a newer one in the cache already proves `expected` stale (no request needed).
    if (obj && rvNumber(obj) > expected) throw new ConflictError(`Execution '${execution.id}' was modified: resourceVersion is ${rvNumber(obj)}, expected ${expected}`);
    if (!obj || rvNumber(obj) !== expected) obj = await this.cache.refresh(obj?.metadata.name ?? executionName(execution.id));
    if (!obj) throw new Error(`Execution '${execution.id}' not found`);
    const acked = Math.max(ackedOf(obj), ...ackCommands.filter((s) => Number.isInteger(s)));
    const status = await executionStatus(execution, acked, obj.metadata.generation);
    let written: ExecutionObject;
    try {
      written = await this.api.replaceStatus({
        ...this.api.body({ metadata: { ...obj.metadata, resourceVersion: String(expected) }, spec: obj.spec }),
        status,
      });
    } catch (err) {
      const code = statusCode(err);
      if (code === 409) {
        await this.cache.refresh(obj.metadata.name).catch(() => undefined);
        throw new ConflictError(`Execution '${execution.id}' was modified: resourceVersion ${expected} is stale (${apiMessage(err)})`);
      }
      if (code === 404) {
        this.cache.observeDeleted(obj);
        throw new Error(`Execution '${execution.id}' not found`);
      }
      throw err;
    }
    this.decoded.set(written.metadata.name, { rv: rvNumber(written), execution: structuredClone(execution) });
    this.cache.observe(written);
    return { execution, resourceVersion: rvNumber(written) };
  }

  async delete(id: string): Promise<boolean> {
    await this.cache.ready();
    const name = this.find(id)?.metadata.name ?? executionName(id);
    const res = await this.api.delete(name);
    const cached = this.cache.get(name);
    if (res && 'metadata' in res) this.cache.observeDeleted(res);
    else if (cached) this.cache.observeDeleted(cached);
    const archived = (await this.archive?.delete(id)) ?? false;
    return res !== undefined || archived;
  }

  /**
   * Deletes exactly this version of a resource (preconditions uid + resourceVersion; the archive row stays): 'moved'
   * when it changed meanwhile (a restart), 'gone' when someone else deleted it.
   */
  async deleteVersion(obj: ExecutionObject): Promise<'deleted' | 'moved' | 'gone'> {
    let res: Awaited<ReturnType<KindApi<ExecutionObject>['delete']>>;
    try {
      res = await this.api.delete(obj.metadata.name, { uid: obj.metadata.uid, resourceVersion: obj.metadata.resourceVersion });
    } catch (err) {
      if (isConflict(err)) { await this.cache.refresh(obj.metadata.name).catch(() => undefined); return 'moved'; }
      throw err;
    }
    this.cache.observeDeleted(res && 'metadata' in res ? res : obj);
    return res ? 'deleted' : 'gone';
  }

  /**
   * Labels a resource archived, exactly at the version the archive holds (a merge patch carrying its resourceVersion):
   * the caches drop it. 'moved' when it changed meanwhile (archived again by a later pass), 'gone' when deleted.
   * With `archived` false the label is removed instead (the resource is live again: the caches take it back).
   */
  async markArchived(obj: ExecutionObject, archived = true): Promise<'marked' | 'moved' | 'gone'> {
    let res: ExecutionObject;
    try {
      res = await this.api.mergePatch(obj.metadata.name, { metadata: { resourceVersion: obj.metadata.resourceVersion, labels: { [LABELS.archived]: archived ? 'true' : null } } });
    } catch (err) {
      if (isConflict(err)) { await this.cache.refresh(obj.metadata.name).catch(() => undefined); return 'moved'; }
      if (statusCode(err) === 404) { this.cache.observeDeleted(obj); return 'gone'; }
      throw err;
    }
    this.cache.observe(res);
    return 'marked';
  }

  /**
   * The resources labelled archived (not in the cache), read in pages of `pageSize` and handed to `each` page by page,
   * so a scan never holds them all. A continue token that expired (410) ends the scan early: the next one goes on.
   */
  async scanArchived(each: (objs: ExecutionObject[]) => Promise<boolean | void>, pageSize = LIST_PAGE): Promise<void> {
    let cont: string | undefined;
    do {
      let page: Awaited<ReturnType<KindApi<ExecutionObject>['page']>>;
      try {
        page = await this.api.page(ARCHIVED_SELECTOR, pageSize, cont);
      } catch (err) {
        if (cont && statusCode(err) === 410) return;
        throw err;
      }
      if ((await each(page.items ?? [])) === false) return;
      cont = page.metadata?.continue ?? (page.metadata as { _continue?: string } | undefined)?._continue;
    } while (cont);
  }

  /** The record of a cached resource (undefined while its status is pending). Shared: do not modify. */
  recordOf(obj: ExecutionObject): Execution | undefined { return this.record(obj); }

  /** The record of a live (cached) execution by id. Shared: do not modify. */
  liveRecord(id: string): Execution | undefined {
    const obj = this.find(id);
    return obj && this.record(obj);
  }

  async search(query: ExecutionQuery): Promise<Page<Execution>> {
    await this.cache.ready();
    const from = dateMs(query.startDate);
    const to = dateMs(query.endDate);
    const labels = Object.entries(query.labels ?? {});
    const states = query.state?.length ? new Set(query.state) : undefined;
    const rows: { e: Execution; start: number; name: string }[] = [];
    const liveIds: string[] = [];
    for (const obj of this.cache.list()) {
      if (this.archive) liveIds.push(executionIdOf(obj));
      const spec = obj.spec;
      if (query.namespace && !inNamespace(spec.namespace, query.namespace)) continue;
      if (query.flowId && spec.flowId !== query.flowId) continue;
      const e = this.record(obj);
      if (!e) continue;
      if (states && !states.has(e.state.current)) continue;
      const start = dateMs(e.state.startDate);
      if (Number.isFinite(from) && !(start >= from)) continue;
      if (Number.isFinite(to) && !(start <= to)) continue;
      if (labels.some(([k, v]) => !(e.labels ?? []).some((l) => l.key === k && String(l.value) === v))) continue;
      if (query.filters?.length && !rowMatches(query.filters, executionRow(e))) continue;
      rows.push({ e, start, name: obj.metadata.creationTimestamp ?? '' });
    }
    const offset = query.offset && query.offset > 0 ? Math.floor(query.offset) : 0;
    const limit = query.limit !== undefined && query.limit >= 0 ? Math.floor(query.limit) : undefined;
    if (this.archive) return this.searchWithArchive(query, rows.map((r) => r.e).sort(newestFirst), liveIds, offset, limit);
    rows.sort((a, b) => b.start - a.start || b.name.localeCompare(a.name) || b.e.id.localeCompare(a.e.id));
    const end = limit === undefined ? undefined : offset + limit;
    return { results: rows.slice(offset, end).map((r) => structuredClone(r.e)), total: rows.length };
  }

  /**
   * Live matches (every cached resource answers for its id, matching or not) merged with archived ones: the archive
   * is read for the window that can reach the page (order.ts archiveWindow), totals add up.
   */
  private async searchWithArchive(query: ExecutionQuery, live: Execution[], liveIds: string[], offset: number, limit: number | undefined): Promise<Page<Execution>> {
    const window = archiveWindow(offset, limit, live.length);
    const archived = await this.archive!.search({ ...query, offset: window.offset, limit: window.limit }, liveIds);
    const results = mergePage(live, archived.results, window.offset, offset, limit);
    return { results: results.map((e) => (live.includes(e) ? structuredClone(e) : e)), total: live.length + archived.total };
  }

  async listActive(): Promise<StoredExecution[]> {
    return (await this.active()).map(({ e, rv }) => ({ execution: structuredClone(e), resourceVersion: rv }));
  }

  /** As listActive, from the decoded records the cache keeps, without copying them. */
  async listActiveSummaries(): Promise<ExecutionSummary[]> {
    return (await this.active()).map(({ e, rv }) => summaryOf(e, rv));
  }

  /** The cached records in a non-terminal state, oldest first (shared: not to be changed). */
  private async active(): Promise<{ e: Execution; rv: number }[]> {
    await this.cache.ready();
    const active: { e: Execution; rv: number; start: number; created: string }[] = [];
    for (const obj of this.cache.list()) {
      const e = this.record(obj);
      if (!e || isTerminal(e.state.current)) continue;
      active.push({ e, rv: rvNumber(obj), start: dateMs(e.state.startDate), created: obj.metadata.creationTimestamp ?? '' });
    }
    active.sort((a, b) => a.start - b.start || a.created.localeCompare(b.created));
    return active;
  }

  async count(namespace: string, flowId: string, states: ExecutionState[]): Promise<number> {
    await this.cache.ready();
    const wanted = new Set(states);
    let n = 0;
    for (const obj of this.cache.list()) {
      if (obj.spec.namespace !== namespace || obj.spec.flowId !== flowId) continue;
      const e = this.record(obj);
      if (e && wanted.has(e.state.current)) n++;
    }
    return n;
  }

  /**
   * Counted over the cached (live) records, plus the archive's own aggregate of the others when one is configured (the
   * ids the live resources answer for left out of it, as in search): no record is copied or read from the archive.
   */
  async dailyStats(query: DailyStatsQuery): Promise<DailyStatsRow[]> {
    await this.cache.ready();
    const acc = new DailyStatsAccumulator();
    const liveIds: string[] = [];
    for (const obj of this.cache.list()) {
      if (this.archive) liveIds.push(executionIdOf(obj));
      if (query.namespace && !inNamespace(obj.spec.namespace, query.namespace)) continue;
      if (query.flowId && obj.spec.flowId !== query.flowId) continue;
      const e = this.record(obj);
      if (!e || !startsWithin(e, query)) continue;
      if (query.filters?.length && !rowMatches(query.filters, executionRow(e))) continue;
      acc.addExecution(e);
    }
    if (this.archive) for (const row of await this.archive.dailyStats(query, liveIds)) acc.addRow(row);
    return acc.rows();
  }

  /**
   * Appends `{seq, type, inputs, created}` to spec.commands with a JSON patch whose `test` op requires the list to be
   * exactly the one read (so two writers never share a seq); a failed test or a conflict re-reads and retries. A
   * resource labelled archived (out of the caches) gets the command and loses the label in one patch conditional on
   * its resourceVersion: it is live again. One the sweeper deleted is re-created from the archive (revive).
   */
  async addCommand(executionId: string, command: ExecutionCommand): Promise<PendingCommand> {
    await this.cache.ready();
    const created = new Date().toISOString();
    return retrying(12, (err) => statusCode(err) === 409 || statusCode(err) === 422, async (attempt) => {
      let obj = attempt === 0 ? this.find(executionId) : undefined;
      const name = obj?.metadata.name ?? this.find(executionId)?.metadata.name ?? executionName(executionId);
      if (!obj) obj = await this.cache.read(name);
      if (!obj && name !== executionId && RESOURCE_NAME.test(executionId)) { // made with kubectl, out of the cache (archived)
        const handMade = await this.cache.read(executionId);
        if (handMade && executionIdOf(handMade) === executionId) obj = handMade;
      }
      if (!obj && this.archive) {
        const revived = await this.revive(executionId, command, created);
        if (revived) return revived;
        obj = await this.cache.read(name); // revived meanwhile by another writer: append to it
      }
      if (!obj || executionIdOf(obj) !== executionId) throw new Error(`Execution '${executionId}' not found`);
      const list = obj.spec.commands;
      const seq = Math.max(ackedOf(obj), 0, ...(list ?? []).map((c) => c.seq)) + 1;
      const cmd = commandSpec(seq, command, created);
      const archived = isArchivedResource(obj);
      // With an archive, the labels must be those read: a copy from before the sweeper labelled it (a lagging cache)
      // fails the test instead of leaving a command on a resource no cache holds.
      const labelsAsRead: JsonPatchOp[] = !this.archive ? []
        : obj.metadata.labels ? [{ op: 'test', path: '/metadata/labels', value: obj.metadata.labels }]
          : [{ op: 'test', path: '/metadata/resourceVersion', value: obj.metadata.resourceVersion }];
      const ops: JsonPatchOp[] = Array.isArray(list) && !archived
        ? [...labelsAsRead, { op: 'test', path: '/spec/commands', value: list }, { op: 'add', path: '/spec/commands/-', value: cmd }]
        : [
          { op: 'test', path: '/metadata/resourceVersion', value: obj.metadata.resourceVersion },
          ...(archived ? [{ op: 'remove' as const, path: ARCHIVED_LABEL_PATH }] : []),
          Array.isArray(list) ? { op: 'add', path: '/spec/commands/-', value: cmd } : { op: 'add', path: '/spec/commands', value: [cmd] },
        ];
      let patched: ExecutionObject;
      try {
        patched = await this.api.jsonPatch(obj.metadata.name, ops);
      } catch (err) {
        // 422 is a failed `test` only when the object moved on; otherwise the command itself is invalid: no retry.
        if (statusCode(err) === 422 && rvNumber(await this.cache.read(obj.metadata.name)) === rvNumber(obj)) {
          throw Object.assign(new Error(`Invalid command for execution '${executionId}': ${apiMessage(err)}`), { status: 422 });
        }
        throw err;
      }
      this.cache.observe(patched);
      return toPending(executionId, cmd);
    });
  }

  /**
   * A command for an execution whose resource the sweeper deleted (a restart): the resource is created again from the
   * archived record with the command already in spec (so the sweeper, which keeps resources with pending commands, cannot
   * delete it in between). Undefined when it is not archived, or when its resource exists again (a 409: the caller appends).
   */
  private async revive(executionId: string, command: ExecutionCommand, created: string): Promise<PendingCommand | undefined> {
    const archived = await this.archive!.get(executionId);
    if (!archived) return undefined;
    const { body, needsStatus } = executionResource(archived);
    if (needsStatus) {
      throw Object.assign(new Error(`Execution '${executionId}' is archived and its record is too large to re-create as a resource (${JSON.stringify(archived).length} bytes)`), { status: 413 });
    }
    const cmd = commandSpec(1, command, created);
    body.spec.commands = [cmd];
    let obj: ExecutionObject;
    try {
      obj = await this.api.create(this.api.body(body));
    } catch (err) {
      if (isConflict(err)) return undefined;
      throw err;
    }
    this.cache.observe(obj);
    return toPending(executionId, cmd);
  }

  async pendingCommands(executionId?: string): Promise<PendingCommand[]> {
    await this.cache.ready();
    if (executionId !== undefined) {
      const obj = this.find(executionId);
      return obj ? pendingOf(obj) : [];
    }
    return this.cache.list().flatMap(pendingOf).sort((a, b) => a.created.localeCompare(b.created) || a.executionId.localeCompare(b.executionId) || a.seq - b.seq);
  }

  watch(listener: (event: WatchEvent) => void): () => void {
    return this.changes.subscribe(listener);
  }

  onCommand(listener: (command: PendingCommand) => void): () => void {
    return this.commands.subscribe(listener);
  }

  /** Name and uid of the resource holding an execution (any name: hand-made ones too), from the cache. */
  resourceOf(id: string): { name: string; uid: string } | undefined {
    const obj = this.find(id);
    return obj?.metadata.uid ? { name: obj.metadata.name, uid: obj.metadata.uid } : undefined;
  }

  /** The cached resource of an execution id (deterministic name first, then the id index for hand-made ones). */
  private find(id: string): ExecutionObject | undefined {
    const byName = this.cache.get(executionName(id));
    if (byName && executionIdOf(byName) === id) return byName;
    return this.cache.byIndex('id', id)[0];
  }

  private record(obj: ExecutionObject): Execution | undefined {
    const rv = rvNumber(obj);
    const memo = this.decoded.get(obj.metadata.name);
    if (memo && memo.rv === rv) return memo.execution;
    const execution = decodeExecution(obj);
    this.decoded.set(obj.metadata.name, { rv, execution });
    return execution;
  }

  private stored(obj: ExecutionObject): StoredExecution | undefined {
    const e = this.record(obj);
    return e && { execution: structuredClone(e), resourceVersion: rvNumber(obj) };
  }

  /** Watch events and command notifications from the cache (informer or our own writes); not for the initial list. */
  private onCacheEvent(event: CacheEvent<ExecutionObject>): void {
    const name = event.obj.metadata.name;
    if (event.type !== 'deleted') this.misses.forget(executionIdOf(event.obj));
    if (event.type === 'deleted') {
      this.decoded.delete(name);
      this.announced.delete(name);
      this.visible.delete(name);
      return;
    }
    const obj = event.obj;
    const lastSeq = Math.max(0, ...(obj.spec.commands ?? []).map((c) => c.seq));
    if (event.initial) {
      this.announced.set(name, lastSeq);
      if (this.record(obj)) this.visible.add(name);
      return;
    }
    const execution = this.changes.size > 0 || !this.visible.has(name) ? this.record(obj) : undefined;
    if (execution) {
      const type = this.visible.has(name) ? 'MODIFIED' : 'ADDED';
      this.visible.add(name);
      if (this.changes.size > 0) this.changes.emit({ type, execution: structuredClone(execution), resourceVersion: rvNumber(obj) });
    }
    const since = Math.max(this.announced.get(name) ?? 0, ackedOf(obj));
    if (lastSeq > since) {
      this.announced.set(name, lastSeq);
      for (const c of pendingOf(obj)) if (c.seq > since) this.commands.emit(c);
    }
  }
}
