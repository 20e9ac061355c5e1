// The custom-resource adapter of the inference job store (../store.ts): a submission becomes an InferenceJob resource
// (named from the task id) plus a Secret holding the caller's access token. The token is needed by the runner (it names the bucket folder
// `<token>/<session>`) and is never written into the resource. The API creates the Secret without an owner: setting an
// ownerReference needs `delete` on the Secret where OwnerReferencesPermissionEnforcement runs, and the API may only
// create Secrets; the operator adopts it (reconciler.ts), so it is deleted with its InferenceJob.
import { timingSafeEqual } from 'node:crypto';
import { CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions, type KubeConfig } from '@kubernetes/client-node';
import { GROUP, inferenceJobName, KINDS, VERSION } from '../../kube/names.js';
import { isConflict, KindApi } from '../../kube/store/kube-api.js';
import type { JobSecrets } from '../auth.js';
import { BackendRegistry } from '../backends/registry.js';
import type { InferenceConfig, StorageConfig } from '../config.js';
import { InferenceServiceImpl, type InferenceService } from '../service.js';
import { FINAL_STATES } from '../db.js';
import { bucketClient } from '../storage.js';
import type { InferenceJobStore, JobOutputs, JobRecord, NewJob } from '../store.js';
import {
  buildInferenceJob, isFinal, recordOf, requestOf, resourceLabels, taskIdOf, TOKEN_OWNER_ANNOTATION, tokenSecretName, TOKEN_KEY,
  type InferenceJobResource, type InferenceJobStatus,
} from './resource.js';

const OUTPUT_CACHE = 100;

const sameHash = (a: string, b: string): boolean => {
  const x = Buffer.from(a, 'hex'), y = Buffer.from(b, 'hex');
  return x.length === y.length && x.length > 0 && timingSafeEqual(x, y);
};

export class KubeInferenceJobStore implements InferenceJobStore {
  readonly jobs: KindApi<InferenceJobResource>;
  private core: CoreV1Api;
  private outputCache = new Map<string, JobOutputs>();

  constructor(kc: KubeConfig, readonly namespace: string, private secrets: JobSecrets, private storage: StorageConfig) {
    this.jobs = new KindApi<InferenceJobResource>(kc, KINDS.InferenceJob, namespace);
    this.core = kc.makeApiClient(CoreV1Api);
  }

  async create(job: NewJob): Promise<{ job: JobRecord; created: boolean }> {
    const resource = buildInferenceJob(job.id, job.request, {
      tokenHash: job.tokenHash, requestHash: job.requestHash, idempotencyKey: job.idempotencyKey ?? undefined, expiresAt: job.expiresAt,
      folderSealed: this.secrets.seal(`${job.token}/${job.request.session}`, job.id),
    });
    const { resource: stored, created } = await this.createResource(resource, job.token);
    return { job: recordOf(stored), created };
  }

  async get(id: string): Promise<JobRecord | undefined> {
    const r = await this.resource(id);
    return r && recordOf(r);
  }

  /** Lists the namespace's InferenceJobs and keeps those whose `spec.tokenHash` is one of the owner's forms. */
  async list(ownerHashes: readonly string[], limit: number, after?: string): Promise<{ jobs: JobRecord[]; hasMore: boolean }> {
    const all = (await this.jobs.list()).items.filter((r) => ownerHashes.some((h) => sameHash(h, r.spec.tokenHash)))
      .map(recordOf).sort((a, b) => (a.created === b.created ? b.id.localeCompare(a.id) : b.created.localeCompare(a.created)));
    const from = after ? all.findIndex((v) => v.id === after) + 1 : 0;
    return { jobs: all.slice(from, from + limit), hasMore: from + limit < all.length };
  }

  /** Marks `spec.cancelRequested`; the runner, or the reconciler for a job without a runner yet, ends the job. */
  async requestCancel(id: string): Promise<JobRecord | undefined> {
    const r = await this.resource(id);
    if (!r) return undefined;
    const updated = isFinal(r.status?.status) || r.spec.cancelRequested ? r : await this.jobs.mergePatch(r.metadata.name, { spec: { cancelRequested: true } });
    return recordOf(updated);
  }

  /** Outputs of a finished job, from its result document in the caller's bucket (cached: a final document does not change). */
  async outputs(job: JobRecord): Promise<JobOutputs | undefined> {
    if (!FINAL_STATES.includes(job.status) || !job.result_file) return undefined;
    const cached = this.outputCache.get(job.id);
    if (cached) return cached;
    const r = await this.resource(job.id);
    if (!r) return undefined;
    const folder = r.spec.folderSealed ? this.secrets.open(r.spec.folderSealed, job.id) : undefined;
    const key = folder ? `${folder}/${job.result_file}` : r.status?.resultPaths?.[0];
    if (!key) return undefined;
    const req = requestOf(r.spec);
    try {
      const client = bucketClient(this.storage, {
        provider: req.storage_provider, bucket: req.bucket_name, region: req.region, roleArn: req.role_arn, sessionName: `inference-${job.id.slice(0, 16)}`,
      });
      const chunks: Buffer[] = [];
      for await (const ch of await client.getObject(req.bucket_name, key)) chunks.push(ch as Buffer);
      const doc = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { results?: { index: number; output: unknown; error?: string }[] };
      const outputs = (doc.results ?? []).map((it) => ({ index: it.index, output: it.output, ...(it.error ? { error: it.error } : {}) }));
      if (this.outputCache.size >= OUTPUT_CACHE) this.outputCache.delete(this.outputCache.keys().next().value!);
      this.outputCache.set(job.id, outputs);
      return outputs;
    } catch {
      return undefined; // the result file stays the reference; the status is still worth answering
    }
  }

  /**
   * Creates the resource, then its token Secret. When the name exists already (an Idempotency-Key repeated, by any
   * replica) returns the existing resource with `created: false`, making sure its Secret exists (a replica may have
   * died between the two writes).
   */
  private async createResource(resource: InferenceJobResource, token: string): Promise<{ resource: InferenceJobResource; created: boolean }> {
    let stored: InferenceJobResource;
    let created = true;
    try {
      stored = await this.jobs.create({ ...resource, metadata: { ...resource.metadata, namespace: this.namespace } });
    } catch (err) {
      if (!isConflict(err)) throw err;
      const existing = await this.jobs.get(resource.metadata.name);
      if (!existing) throw err;
      stored = existing;
      created = false;
    }
    const taskId = taskIdOf(stored);
    if (taskId && stored.spec.tokenSecretRef) await this.ensureSecret(stored, taskId, token);
    return { resource: stored, created };
  }

  private async ensureSecret(owner: InferenceJobResource, taskId: string, token: string): Promise<void> {
    try {
      await this.core.createNamespacedSecret({
        namespace: this.namespace,
        body: {
          metadata: { name: tokenSecretName(taskId), labels: resourceLabels(taskId), annotations: { [TOKEN_OWNER_ANNOTATION]: owner.metadata.uid! } },
          type: 'Opaque',
          stringData: { [TOKEN_KEY]: token },
        },
      });
    } catch (err) {
      if (!isConflict(err)) throw err;
    }
  }

  async resource(taskId: string): Promise<InferenceJobResource | undefined> {
    const r = await this.jobs.get(inferenceJobName(taskId));
    return r && taskIdOf(r) === taskId ? r : undefined;
  }
}

/** Merge-patches the status subresource of an InferenceJob: the reconciler's only (it folds the runner's report in). */
export async function patchInferenceJobStatus(kc: KubeConfig, namespace: string, name: string, status: InferenceJobStatus): Promise<InferenceJobResource> {
  const api = kc.makeApiClient(CustomObjectsApi);
  return (await api.patchNamespacedCustomObjectStatus({
    group: GROUP, version: VERSION, namespace, plural: KINDS.InferenceJob.plural, name, body: { status },
  }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch))) as InferenceJobResource;
}

export interface ClusterInferenceOptions {
  kc: KubeConfig;
  /** Namespace of the InferenceJob resources (the operator's watched namespace). */
  namespace: string;
  config: InferenceConfig;
  /** The keyed token hashes and sealed folders, under ENCRYPTION_KEY (the operator's key: the reconciler checks the hash). */
  secrets: JobSecrets;
}

/** The batch inference API in cluster mode: the one service (../service.ts) over InferenceJob resources. */
export function clusterInferenceService(o: ClusterInferenceOptions): InferenceService {
  const store = new KubeInferenceJobStore(o.kc, o.namespace, o.secrets, o.config.storage);
  // The registry describes the models from configuration alone; it loads nothing here (runner Pods hold the models).
  const models = new BackendRegistry(o.config, o.config.modelsDir ?? '/models');
  return new InferenceServiceImpl(o.config, store, models, o.secrets, { localModels: false });
}
