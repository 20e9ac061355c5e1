// Validating admission webhooks of the test server: a create or update of a matching resource is sent to the webhook
// as an admission.k8s.io/v1 AdmissionReview before it is stored, and a denial comes back to the client as the real
// kube-apiserver 1.24 shapes it (webhook/errors/statuserror.go ToStatusErr): the webhook's status with its code
// (at least 400), reason and details kept, and the message prefixed `admission webhook "<name>" denied the request: `.
// Only http(s) URLs (no Service references), only CREATE and UPDATE of the main resource, failurePolicy Fail.
import { randomUUID } from 'node:crypto';
import { ApiError, type StatusDetails } from './errors.js';

export interface ValidatingWebhook {
  /** The webhook's name (`flows.validation.flowpilot.io`), as in a ValidatingWebhookConfiguration. */
  name: string;
  /** API group and plurals it is called for (rules: CREATE and UPDATE). */
  group: string;
  resources: string[];
  /** Where the AdmissionReview is POSTed. */
  url: string;
}

export interface AdmissionCall {
  kind: string; group: string; version: string; plural: string; namespace?: string; name?: string;
  operation: 'CREATE' | 'UPDATE'; object: unknown; oldObject?: unknown; dryRun: boolean;
}

interface WebhookStatus { code?: number; reason?: string; message?: string; details?: StatusDetails }

/** Calls the first webhook matching the request; throws the ApiError a real server would answer on a denial. */
export async function admit(webhooks: ValidatingWebhook[] | undefined, call: AdmissionCall): Promise<void> {
  const hook = webhooks?.find((w) => w.group === call.group && w.resources.includes(call.plural));
  if (!hook) return;
  const review = {
    apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview',
    request: {
      uid: randomUUID(), kind: { group: call.group, version: call.version, kind: call.kind },
      resource: { group: call.group, version: call.version, resource: call.plural },
      requestKind: { group: call.group, version: call.version, kind: call.kind },
      name: call.name, namespace: call.namespace, operation: call.operation,
      object: call.object, oldObject: call.oldObject ?? null, dryRun: call.dryRun,
    },
  };
  let response: { allowed?: boolean; status?: WebhookStatus } | undefined;
  try {
    const res = await fetch(hook.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(review) });
    if (res.status !== 200) throw new Error(`the server responded with status ${res.status}`);
    response = ((await res.json()) as { response?: typeof response }).response;
  } catch (err) {
    throw new ApiError(500, 'InternalError', `Internal error occurred: failed calling webhook "${hook.name}": ${(err as Error).message}`);
  }
  if (response?.allowed) return;
  throw toStatusErr(hook.name, response?.status);
}

/** kube-apiserver 1.24's ToStatusErr: code at least 400, the message prefixed with who denied it, the rest kept. */
export function toStatusErr(webhookName: string, status: WebhookStatus | undefined): ApiError {
  const deniedBy = `admission webhook "${webhookName}" denied the request`;
  const code = status?.code !== undefined && status.code >= 400 ? status.code : 400;
  const message = status?.message ? `${deniedBy}: ${status.message}` : status?.reason ? `${deniedBy}: ${status.reason}` : `${deniedBy} without explanation`;
  return new ApiError(code, status?.reason ?? '', message, status?.details);
}
