// The Kubernetes Job that runs one InferenceJob: the runner image running `dist/operator/inference/kube/runner.js`, with the
// access token from the job's Secret (never in the spec), owned by the InferenceJob, a few Pod retries (a retried Pod
// resumes from the bucket checkpoint). Built purely from its inputs so the shape is easy to test.
import type { V1EnvVar, V1Job } from '@kubernetes/client-node';
import type { LauncherSettings } from '../../kube/job-spec.js';
import { LABELS } from '../../kube/names.js';
import { runnerJobName, TASK_ID_LABEL, taskIdOf, type InferenceJobResource } from './resource.js';

export const RUNNER_ENTRY = 'dist/operator/inference/kube/runner.js';
export const RUNNER_CONTAINER = 'inference';
/** managed-by of runner Jobs and Pods (not the flow launcher's value: its informers ignore these). */
export const INFERENCE_MANAGER = 'flowpilot-inference';

export interface InferenceJobSettings extends LauncherSettings {
  /** Pod failures retried within the Job (default 2); each retry resumes. */
  backoffLimit?: number;
  /** ServiceAccount of runner Pods: needs get on inferencejobs and patch on configmaps (its report) (default serviceAccountName). */
  runnerServiceAccountName?: string;
  /** App directory in the runner image (default /app). */
  appDir?: string;
}

const extraEnv = (env: LauncherSettings['env']): V1EnvVar[] =>
  !env ? [] : Array.isArray(env) ? env : Object.entries(env).map(([name, value]) => ({ name, value }));

export function buildRunnerJob(r: InferenceJobResource, namespace: string, s: InferenceJobSettings): V1Job {
  const taskId = taskIdOf(r)!;
  const ref = r.spec.tokenSecretRef!;
  const labels = { [LABELS.managedBy]: INFERENCE_MANAGER, [TASK_ID_LABEL]: taskId };
  const app = s.appDir ?? '/app';
  const sa = s.runnerServiceAccountName ?? s.serviceAccountName;
  const user = s.runAsUser ?? 1000;
  return {
    apiVersion: 'batch/v1', kind: 'Job',
    metadata: {
      name: runnerJobName(taskId), namespace, labels,
      ownerReferences: [{ apiVersion: r.apiVersion, kind: r.kind, name: r.metadata.name, uid: r.metadata.uid!, controller: true, blockOwnerDeletion: true }],
    },
    spec: {
      backoffLimit: s.backoffLimit ?? 2,
      ttlSecondsAfterFinished: s.ttlSecondsAfterFinished ?? 3600,
      template: {
        metadata: { labels },
        spec: {
          restartPolicy: 'Never',
          terminationGracePeriodSeconds: s.terminationGracePeriodSeconds ?? 30,
          // The runner reads its InferenceJob and patches its report ConfigMap through the API.
          automountServiceAccountToken: true,
          ...(sa ? { serviceAccountName: sa } : {}),
          securityContext: { runAsNonRoot: true, runAsUser: user, runAsGroup: user, fsGroup: user, seccompProfile: { type: 'RuntimeDefault' } },
          containers: [{
            name: RUNNER_CONTAINER,
            image: s.runnerImage,
            ...(s.imagePullPolicy ? { imagePullPolicy: s.imagePullPolicy } : {}),
            command: ['node', `${app}/${RUNNER_ENTRY}`],
            workingDir: app,
            env: [
              { name: 'INFERENCE_JOB_NAME', value: r.metadata.name },
              { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
              { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
              { name: 'INFERENCE_ACCESS_TOKEN', valueFrom: { secretKeyRef: { name: ref.name, key: ref.key } } },
              { name: 'HOME', value: '/work' },
              ...extraEnv(s.env),
            ],
            ...(s.envFrom?.length ? { envFrom: s.envFrom } : {}),
            ...(s.resources ? { resources: s.resources } : {}),
            volumeMounts: [{ name: 'work', mountPath: '/work' }],
            securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] } },
            terminationMessagePolicy: 'FallbackToLogsOnError',
          }],
          volumes: [{ name: 'work', emptyDir: {} }],
        },
      },
    },
  };
}
