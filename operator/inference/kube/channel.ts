// The cluster home's job channel (../channel.ts) for the runner Pod: the job is read from its InferenceJob (get only),
// item outcomes, the inputs, the result stem and the flushed parts are committed to the bucket checkpoint
// (checkpoint.ts), and the state and counts are reported through the job's report ConfigMap (report.ts), which the
// reconciler folds into the InferenceJob's status. The runner never writes that status.
import { CoreV1Api, PatchStrategy, setHeaderOptions, type KubeConfig } from '@kubernetes/client-node';
import { KINDS } from '../../kube/names.js';
import { KindApi } from '../../kube/store/kube-api.js';
import type { ActiveState, JobChannel, RunnableJob } from '../channel.js';
import type { StorageConfig } from '../config.js';
import { customIdOf, type FinalState, type ItemOutcome } from '../db.js';
import type { ResultItem } from '../results.js';
import { bucketClient } from '../storage.js';
import { BucketCheckpoint, type StoredOutcome } from './checkpoint.js';
import { REPORT_KEY, reportName, type RunnerReport } from './report.js';
import { isFinal, recordOf, requestOf, taskIdOf, type InferenceJobResource } from './resource.js';

export interface ClusterChannelOptions {
  kc: KubeConfig;
  namespace: string;
  /** InferenceJob resource name. */
  name: string;
  /** The caller's token (from the job's Secret): it names the bucket folder. */
  token: string;
  storage: StorageConfig;
  /** Pod name, recorded with each item and in the report. */
  pod?: string;
  /** Least pause between two progress reports (default 500 ms); state changes are reported at once. */
  progressEveryMs?: number;
}

const now = (): string => new Date().toISOString();

export class ClusterJobChannel implements JobChannel {
  private api: KindApi<InferenceJobResource>;
  private core: CoreV1Api;
  private taskId = '';
  private ckpt?: BucketCheckpoint;
  private inputs?: unknown[];
  private outcomes = new Map<number, StoredOutcome>();
  private flushed = new Set<number>();
  private maxPart = 0;
  private report: RunnerReport = {};
  private sending: Promise<unknown> = Promise.resolve();
  private lastProgress = 0;
  /** The final state this runner reported, or `already` when the job was final before it started. */
  ended?: FinalState | 'already';

  constructor(private o: ClusterChannelOptions) {
    this.api = new KindApi<InferenceJobResource>(o.kc, KINDS.InferenceJob, o.namespace);
    this.core = o.kc.makeApiClient(CoreV1Api);
  }

  async open(): Promise<RunnableJob | undefined> {
    const r = await this.api.get(this.o.name);
    if (!r) throw new Error(`InferenceJob ${this.o.name} not found`);
    if (isFinal(r.status?.status)) { this.ended = 'already'; return undefined; }
    this.taskId = taskIdOf(r) ?? this.o.name;
    const req = requestOf(r.spec);
    const folder = `${this.o.token}/${req.session}`;
    const client = bucketClient(this.o.storage, {
      provider: req.storage_provider, bucket: req.bucket_name, region: req.region, roleArn: req.role_arn, sessionName: `inference-${this.taskId.slice(0, 16)}`,
    });
    this.ckpt = new BucketCheckpoint(client, req.bucket_name, folder, this.taskId);
    const rec = recordOf(r);
    this.report = { started: r.status?.started, ...(this.o.pod ? { pod: this.o.pod } : {}) };
    return {
      id: this.taskId, request: req, folder, expiresAt: rec.expires_at, created: rec.created,
      started: r.status?.started !== undefined, cancelRequested: r.spec.cancelRequested === true,
    };
  }

  /** Merge-patches the whole report (patches are chained: they land in order). */
  private send(): Promise<void> {
    const body = { data: { [REPORT_KEY]: JSON.stringify(this.report) } };
    const p = this.sending.then(() => this.core.patchNamespacedConfigMap({ name: reportName(this.taskId), namespace: this.o.namespace, body },
      setHeaderOptions('Content-Type', PatchStrategy.MergePatch)));
    this.sending = p.catch(() => undefined);
    return p.then(() => undefined);
  }

  private counts(): void {
    let done = 0, failed = 0, promptTokens = 0, completionTokens = 0;
    for (const it of this.outcomes.values()) {
      if (it.status === 'DONE') done++; else failed++;
      promptTokens += it.promptTokens; completionTokens += it.completionTokens;
    }
    Object.assign(this.report, { total: this.inputs?.length, done, failed, promptTokens, completionTokens });
  }

  /** Reports the state; false when the job ended meanwhile (the reconciler expired or cancelled it before this runner). */
  async setState(state: ActiveState): Promise<boolean> {
    const r = await this.api.get(this.o.name);
    if (!r || isFinal(r.status?.status)) { this.ended = 'already'; return false; }
    this.report.state = state;
    this.report.started ??= now();
    await this.send();
    return true;
  }

  async setBackend(label: string, modelFile: string): Promise<void> {
    Object.assign(this.report, { backend: label, modelFile });
    await this.send();
  }

  async ensureInputs(load: () => Promise<unknown[]>): Promise<void> {
    const ckpt = this.ckpt!;
    let inputs = await ckpt.inputs();
    if (!inputs) {
      inputs = await load();
      await ckpt.saveInputs(inputs);
    }
    this.inputs = inputs;
    this.outcomes = await ckpt.items();
    for (const [part, idxs] of await ckpt.parts()) {
      this.maxPart = Math.max(this.maxPart, part);
      for (const i of idxs) this.flushed.add(i);
    }
    this.counts();
    await this.send();
  }

  private item(index: number): ResultItem {
    const input = this.inputs![index];
    const it = this.outcomes.get(index);
    return {
      index, custom_id: customIdOf(input, index), input, status: it?.status ?? 'PENDING', output: it?.output ?? null, error: it?.error ?? null,
      prompt_tokens: it?.promptTokens ?? 0, completion_tokens: it?.completionTokens ?? 0,
    };
  }

  async items(): Promise<ResultItem[]> { return (this.inputs ?? []).map((_, i) => this.item(i)); }

  /** Attempts are not counted in cluster mode (a Pod's log says what it resumed). */
  async startItem(): Promise<void> {}

  async commit(idx: number, outcome: ItemOutcome): Promise<void> {
    const stored: StoredOutcome = { ...outcome, index: idx, finished: now(), ...(this.o.pod ? { pod: this.o.pod } : {}) };
    await this.ckpt!.saveItem(stored);
    this.outcomes.set(idx, stored);
    if (Date.now() - this.lastProgress >= (this.o.progressEveryMs ?? 500)) {
      this.lastProgress = Date.now();
      this.counts();
      await this.send();
    }
  }

  async fixResultStem(proposed: string): Promise<string> {
    let stem = await this.ckpt!.resultStem();
    if (!stem) { await this.ckpt!.saveResultStem(proposed); stem = proposed; }
    this.report.resultStem = stem;
    return stem;
  }

  async unflushed(): Promise<{ items: ResultItem[]; part: number }> {
    const idxs = [...this.outcomes.keys()].filter((i) => !this.flushed.has(i)).sort((a, b) => a - b);
    return { items: idxs.map((i) => this.item(i)), part: this.maxPart + 1 };
  }

  async markFlushed(idxs: number[], part: number): Promise<void> {
    await this.ckpt!.savePart(part, idxs);
    for (const i of idxs) this.flushed.add(i);
    this.maxPart = Math.max(this.maxPart, part);
  }

  async cancelRequested(): Promise<boolean> {
    return (await this.api.get(this.o.name))?.spec.cancelRequested === true;
  }

  /** Reports the end, then removes the checkpoint (a crash in between leaves it: harmless, the report is the record). */
  async finish(state: FinalState, error?: string): Promise<void> {
    if (this.inputs) this.counts();
    Object.assign(this.report, { state, finished: now(), ...(error ? { error } : {}) });
    await this.send();
    this.ended = state;
    await this.ckpt?.remove();
  }
}
