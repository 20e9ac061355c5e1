// Resource types the test server serves: built-in kinds (defaults and the validation real clients rely on) and the shape of a CRD-backed type.
import type { StatusCause } from './errors.js';
import { deepEqual } from './patch.js';

export type KubeObject = Record<string, any> & { metadata: Record<string, any> };

export interface ResourceType {
  group: string;
  /** Served versions; the first is the preferred (and, for CRDs, storage) version. */
  versions: string[];
  plural: string;
  singular: string;
  kind: string;
  listKind: string;
  namespaced: boolean;
  shortNames: string[];
  categories?: string[];
  /** Has a /status subresource (main endpoint ignores status; /status changes only status). */
  status: boolean;
  verbs: string[];
  /** Field paths accepted by fieldSelector besides metadata.name / metadata.namespace. */
  fieldSelectors: string[];
  /** Create-only review resources answered without storing (TokenReview, SubjectAccessReview). */
  review?: 'token' | 'access';
  /** Default missing fields (create and update); `old` is set on update. May return the paths of pruned unknown fields. */
  defaults?: (obj: KubeObject, old?: KubeObject) => string[] | void;
  /** Validate (after defaults; for CRDs after pruning); `version` is the API version of the request. */
  validate?: (obj: KubeObject, old: KubeObject | undefined, version: string) => StatusCause[];
  /** Default propagation policy of DELETE without one (batch/v1 Jobs orphan their Pods, like the real server). */
  defaultPropagation?: 'Orphan' | 'Background';
  /** Strategic merge patch is refused (415) for custom resources, as by the real server. */
  customResource?: boolean;
}

export const STD_VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

export const typeKey = (group: string, plural: string): string => `${group}/${plural}`;
export const apiVersionOf = (group: string, version: string): string => (group ? `${group}/${version}` : version);

const required = (field: string): StatusCause => ({ reason: 'FieldValueRequired', message: 'Required value', field });
const unsupported = (field: string, value: unknown, allowed: string[]): StatusCause => ({
  reason: 'FieldValueNotSupported', field,
  message: `Unsupported value: ${JSON.stringify(value)}: supported values: ${allowed.map((a) => `"${a}"`).join(', ')}`,
});

function imagePullPolicy(image: string): string {
  const last = image.split('/').pop() ?? '';
  const tag = last.includes('@') ? 'digest' : last.includes(':') ? last.split(':').pop() : 'latest';
  return tag === 'latest' ? 'Always' : 'IfNotPresent';
}

function defaultPodSpec(spec: Record<string, any>, restart = 'Always'): void {
  spec.restartPolicy ??= restart;
  spec.dnsPolicy ??= 'ClusterFirst';
  spec.terminationGracePeriodSeconds ??= 30;
  spec.schedulerName ??= 'default-scheduler';
  spec.securityContext ??= {};
  spec.serviceAccountName ??= spec.serviceAccount ?? 'default';
  for (const c of [...(spec.containers ?? []), ...(spec.initContainers ?? [])]) {
    if (!c || typeof c !== 'object') continue;
    if (typeof c.image === 'string') c.imagePullPolicy ??= imagePullPolicy(c.image);
    c.terminationMessagePath ??= '/dev/termination-log';
    c.terminationMessagePolicy ??= 'File';
    c.resources ??= {};
  }
}

function validatePodSpec(spec: any, path: string): StatusCause[] {
  const causes: StatusCause[] = [];
  if (!spec || typeof spec !== 'object') return [required(path)];
  if (!Array.isArray(spec.containers) || spec.containers.length === 0) causes.push(required(`${path}.containers`));
  const names = new Set<string>();
  (spec.containers ?? []).forEach((c: any, i: number) => {
    if (!c?.name) causes.push(required(`${path}.containers[${i}].name`));
    else if (names.has(c.name)) causes.push({ reason: 'FieldValueDuplicate', field: `${path}.containers[${i}].name`, message: `Duplicate value: "${c.name}"` });
    else names.add(c.name);
    if (!c?.image) causes.push(required(`${path}.containers[${i}].image`));
  });
  if (spec.restartPolicy && !['Always', 'OnFailure', 'Never'].includes(spec.restartPolicy)) {
    causes.push(unsupported(`${path}.restartPolicy`, spec.restartPolicy, ['Always', 'OnFailure', 'Never']));
  }
  return causes;
}

const same = (a: unknown, b: unknown): boolean => deepEqual(a, b);

function builtin(group: string, version: string, plural: string, kind: string, extra: Partial<ResourceType> = {}): ResourceType {
  return {
    group, versions: [version], plural, singular: kind.toLowerCase(), kind, listKind: `${kind}List`, namespaced: true,
    shortNames: [], status: false, verbs: STD_VERBS, fieldSelectors: [], ...extra,
  };
}

export function builtinTypes(): ResourceType[] {
  return [
    builtin('', 'v1', 'pods', 'Pod', {
      status: true, shortNames: ['po'], categories: ['all'],
      fieldSelectors: ['status.phase', 'spec.nodeName', 'spec.restartPolicy', 'spec.schedulerName', 'spec.serviceAccountName', 'status.podIP'],
      defaults: (o, old) => {
        o.spec ??= {};
        defaultPodSpec(o.spec);
        o.status ??= {};
        o.status.phase ??= 'Pending';
        if (!old) o.status.qosClass ??= 'BestEffort';
      },
      validate: (o, old) => {
        const causes = validatePodSpec(o.spec, 'spec');
        if (old) {
          const strip = (s: any) => ({ ...s, containers: (s?.containers ?? []).map((c: any) => ({ ...c, image: undefined })), activeDeadlineSeconds: undefined, tolerations: undefined });
          if (!same(strip(o.spec), strip(old.spec))) {
            causes.push({ reason: 'FieldValueForbidden', field: 'spec', message: 'Forbidden: pod updates may not change fields other than `spec.containers[*].image`, `spec.activeDeadlineSeconds` or `spec.tolerations` (only additions to existing tolerations)' });
          }
        }
        return causes;
      },
    }),
    builtin('', 'v1', 'secrets', 'Secret', {
      fieldSelectors: ['type'],
      defaults: (o) => {
        o.type ??= 'Opaque';
        if (o.stringData && typeof o.stringData === 'object') {
          o.data = { ...(o.data ?? {}) };
          for (const [k, v] of Object.entries(o.stringData)) o.data[k] = Buffer.from(String(v)).toString('base64');
          delete o.stringData;
        }
      },
      validate: (o, old) => (old && old.immutable && (!same(o.data, old.data) || !same(o.type, old.type))
        ? [{ reason: 'FieldValueForbidden', field: 'data', message: 'Forbidden: field is immutable when `immutable` is set' }] : []),
    }),
    builtin('', 'v1', 'configmaps', 'ConfigMap', {
      shortNames: ['cm'],
      validate: (o, old) => (old && old.immutable && (!same(o.data, old.data) || !same(o.binaryData, old.binaryData))
        ? [{ reason: 'FieldValueForbidden', field: 'data', message: 'Forbidden: field is immutable when `immutable` is set' }] : []),
    }),
    builtin('', 'v1', 'serviceaccounts', 'ServiceAccount', { shortNames: ['sa'] }),
    builtin('', 'v1', 'events', 'Event', {
      shortNames: ['ev'],
      fieldSelectors: ['involvedObject.kind', 'involvedObject.namespace', 'involvedObject.name', 'involvedObject.uid', 'involvedObject.apiVersion', 'involvedObject.resourceVersion', 'involvedObject.fieldPath', 'reason', 'reportingComponent', 'source', 'type'],
    }),
    builtin('', 'v1', 'namespaces', 'Namespace', {
      namespaced: false, status: true, shortNames: ['ns'], fieldSelectors: ['status.phase'],
      verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'],
      defaults: (o) => {
        o.spec ??= {};
        o.spec.finalizers ??= ['kubernetes'];
        o.status ??= {};
        o.status.phase ??= 'Active';
        o.metadata.labels = { ...(o.metadata.labels ?? {}), 'kubernetes.io/metadata.name': o.metadata.name };
      },
    }),
    builtin('batch', 'v1', 'jobs', 'Job', {
      status: true, categories: ['all'], fieldSelectors: ['status.successful'], defaultPropagation: 'Orphan',
      defaults: (o, old) => {
        o.spec ??= {};
        o.status ??= {};
        const s = o.spec;
        s.backoffLimit ??= 6;
        s.completions ??= 1;
        s.parallelism ??= 1;
        s.completionMode ??= 'NonIndexed';
        s.suspend ??= false;
        s.podReplacementPolicy ??= 'TerminatingOrFailed';
        s.template ??= {};
        s.template.metadata ??= {};
        if (s.template.spec && typeof s.template.spec === 'object') defaultPodSpec(s.template.spec); // restartPolicy defaults to Always, which a Job refuses (as for real)
        if (old) return;
        const uid = o.metadata.uid as string;
        const name = o.metadata.name as string;
        if (!s.manualSelector) {
          s.selector ??= { matchLabels: { 'batch.kubernetes.io/controller-uid': uid } };
          s.template.metadata.labels = {
            ...(s.template.metadata.labels ?? {}),
            'batch.kubernetes.io/controller-uid': uid, 'batch.kubernetes.io/job-name': name, 'controller-uid': uid, 'job-name': name,
          };
          if (!o.metadata.labels || Object.keys(o.metadata.labels).length === 0) o.metadata.labels = { ...s.template.metadata.labels };
        }
      },
      validate: (o, old) => {
        const causes = validatePodSpec(o.spec?.template?.spec, 'spec.template.spec');
        const rp = o.spec?.template?.spec?.restartPolicy;
        if (rp !== undefined && rp !== 'Never' && rp !== 'OnFailure') causes.push(unsupported('spec.template.spec.restartPolicy', rp, ['OnFailure', 'Never']));
        if (typeof o.spec?.backoffLimit === 'number' && o.spec.backoffLimit < 0) {
          causes.push({ reason: 'FieldValueInvalid', field: 'spec.backoffLimit', message: `Invalid value: ${o.spec.backoffLimit}: must be greater than or equal to 0` });
        }
        if (old && !same(o.spec?.template, old.spec?.template) && !(old.spec?.suspend)) {
          causes.push({ reason: 'FieldValueInvalid', field: 'spec.template', message: 'Invalid value: field is immutable' });
        }
        if (old && !same(o.spec?.selector, old.spec?.selector)) causes.push({ reason: 'FieldValueInvalid', field: 'spec.selector', message: 'Invalid value: field is immutable' });
        return causes;
      },
    }),
    builtin('coordination.k8s.io', 'v1', 'leases', 'Lease'),
    builtin('authentication.k8s.io', 'v1', 'tokenreviews', 'TokenReview', { namespaced: false, verbs: ['create'], review: 'token' }),
    builtin('authorization.k8s.io', 'v1', 'subjectaccessreviews', 'SubjectAccessReview', { namespaced: false, verbs: ['create'], review: 'access' }),
  ];
}
