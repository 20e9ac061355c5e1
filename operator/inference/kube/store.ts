// Cluster job records of the batch inference API: a submission becomes an InferenceJob resource (named from the task id)
// plus a Secret holding the caller's access token. The token is needed by the runner (it names the bucket folder
// `<token>/<session>`) and is never written into the resource. The API creates the Secret without an owner: setting an
// ownerReference needs `delete` on the Secret where OwnerReferencesPermissionEnforcement runs, and the API may only
// create Secrets; the operator adopts it (reconciler.ts), so it is deleted with its InferenceJob.
import { CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions, type KubeConfig } from '@kubernetes/client-node';
import { GROUP, inferenceJobName, KINDS, VERSION } from '../../kube/names.js';
import { isConflict, KindApi } from '../../kube/store/kube-api.js';
import { resourceLabels, taskIdOf, TOKEN_OWNER_ANNOTATION, tokenSecretName, TOKEN_KEY, type InferenceJobResource, type InferenceJobStatus } from './resource.js';

export class KubeInferenceJobStore {
  readonly jobs: KindApi<InferenceJobResource>;
  private core: CoreV1Api;

  constructor(kc: KubeConfig, readonly namespace: string) {
    this.jobs = new KindApi<InferenceJobResource>(kc, KINDS.InferenceJob, namespace);
    this.core = kc.makeApiClient(CoreV1Api);
  }

  /**
   * Creates the resource, then its token Secret. When the name exists already (an Idempotency-Key repeated, by any
   * replica) returns the existing resource with `created: false`, making sure its Secret exists (a replica may have
   * died between the two writes).
   */
  async create(resource: InferenceJobResource, token: string): Promise<{ resource: InferenceJobResource; created: boolean }> {
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

  async get(taskId: string): Promise<InferenceJobResource | undefined> {
    const r = await this.jobs.get(inferenceJobName(taskId));
    return r && taskIdOf(r) === taskId ? r : undefined;
  }
}

/** Merge-patches the status subresource of an InferenceJob (runner progress, reconciler outcomes). */
export async function patchInferenceJobStatus(kc: KubeConfig, namespace: string, name: string, status: InferenceJobStatus): Promise<InferenceJobResource> {
  const api = kc.makeApiClient(CustomObjectsApi);
  return (await api.patchNamespacedCustomObjectStatus({
    group: GROUP, version: VERSION, namespace, plural: KINDS.InferenceJob.plural, name, body: { status },
  }, setHeaderOptions('Content-Type', PatchStrategy.MergePatch))) as InferenceJobResource;
}
