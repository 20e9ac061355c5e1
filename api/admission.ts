// Validating admission webhook for Flow resources (flowpilot.io/v1): `POST /admission/flows` takes an
// admission.k8s.io/v1 AdmissionReview and answers whether the Flow's spec passes the engine's own validation
// (validateFlow, exactly what the operator's reconcile uses), so `kubectl apply` of an invalid Flow is refused with
// one `spec.<path>: <reason>` per problem instead of ending as Ready=False; FlowRevision specs cannot be changed.
// Deletes, sub-resources and other kinds pass.
import { Router } from '@koa/router';
import Koa from 'koa';
import { GROUP, KINDS } from '../operator/kube/names.js';
import type { PluginDefault } from '../operator/core/types.js';
import { FlowValidationError, formatIssue, isNamespaceId, validateFlow, type ValidationIssue } from '../operator/model/index.js';
import { readJson } from './body.js';
import { badRequest, errorMiddleware } from './errors.js';

export const ADMISSION_PATH = '/admission/flows';
const REVIEW_API_VERSION = 'admission.k8s.io/v1';
/** An AdmissionReview holds the object and the old object; a Flow is at most ~1.5 MiB (etcd's limit). */
const MAX_REVIEW_BYTES = 8 * 1024 * 1024;
const MAX_LISTED_ISSUES = 20;
const MAX_WARNINGS = 10;
const MAX_WARNING_CHARS = 256;

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

export interface AdmissionOptions {
  /** metadata.name of the Flow resource that already defines (flow namespace, id), if any (reconcile's ownership rule). */
  ownerOf?(namespace: string, id: string): string | undefined;
  /** The plugin defaults a flow of the namespace inherits (its namespace's, then the parents'), as validation uses them. */
  inheritedDefaults?(namespace: string): PluginDefault[][];
}

/** The part of an admission.k8s.io/v1 AdmissionRequest this webhook reads. */
export interface AdmissionRequest {
  uid: string;
  kind?: { group?: string; version?: string; kind?: string };
  resource?: { group?: string; version?: string; resource?: string };
  subResource?: string;
  operation?: string;
  name?: string;
  namespace?: string;
  object?: unknown;
  oldObject?: unknown;
}

export interface StatusCause { type: string; field: string; message: string }
export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  status?: { code: number; reason: string; message: string; details?: { name?: string; group: string; kind: string; causes: StatusCause[] } };
  warnings?: string[];
}
export interface AdmissionReviewResponse { apiVersion: typeof REVIEW_API_VERSION; kind: 'AdmissionReview'; response: AdmissionResponse }

/** The request of an AdmissionReview body; throws a 400 HttpError when the body is not one. */
export function admissionRequest(body: unknown): AdmissionRequest {
  if (!isObj(body)) throw badRequest('Expected an AdmissionReview JSON object', 'body');
  if (body.apiVersion !== REVIEW_API_VERSION || body.kind !== 'AdmissionReview') {
    throw badRequest(`Expected apiVersion ${REVIEW_API_VERSION} and kind AdmissionReview`, 'apiVersion');
  }
  const request = body.request;
  if (!isObj(request)) throw badRequest('AdmissionReview has no request', 'request');
  if (typeof request.uid !== 'string' || request.uid === '') throw badRequest('AdmissionReview request has no uid', 'request.uid');
  return request as unknown as AdmissionRequest;
}

const isFlowRequest = (r: AdmissionRequest): boolean =>
  (r.kind?.group === GROUP && r.kind.kind === KINDS.Flow.kind) || (r.resource?.group === GROUP && r.resource.resource === KINDS.Flow.plural);

/** Field path of a flow issue inside the resource: "tasks[0].type" → "spec.tasks[0].type". */
const specPath = (path: string): string => (path ? `spec.${path}` : 'spec');

function keyOf(obj: unknown): { namespace: string; id: string } | undefined {
  const spec = isObj(obj) && isObj(obj.spec) ? obj.spec : undefined;
  return typeof spec?.namespace === 'string' && typeof spec.id === 'string' ? { namespace: spec.namespace, id: spec.id } : undefined;
}

/**
 * A denial kubectl prints as we wrote it. The API server prefixes status.message with `admission webhook "<name>"
 * denied the request: ` and passes code, reason and details through; kubectl rebuilds the message of any "Invalid"
 * error (reason Invalid, or code 422 with no reason it knows) from details as `The flows "x" is invalid: ...`, losing
 * the webhook's words and the flow's name. So: 400 BadRequest (`Error from server (BadRequest): ... denied the request:
 * Flow company.team/hello is invalid: spec.tasks[0].type: ...`); details.causes still list each field for programs.
 */
export function denial(message: string, details: { name?: string; kind: string; causes: StatusCause[] }): AdmissionResponse['status'] {
  return { code: 400, reason: 'BadRequest', message, details: { ...details, group: GROUP } };
}

/** "Flow company.team/hello" (the flow the resource defines), else "Flow \"resource-name\"". */
function flowLabel(spec: unknown, name: string | undefined): string {
  const key = keyOf({ spec });
  if (key) return `Flow ${key.namespace}/${key.id}`;
  return `Flow${name ? ` "${name}"` : ''}`;
}

function deny(uid: string, name: string | undefined, spec: unknown, issues: ValidationIssue[]): AdmissionResponse {
  const lines = issues.slice(0, MAX_LISTED_ISSUES).map(formatIssue);
  if (issues.length > MAX_LISTED_ISSUES) lines.push(`(and ${issues.length - MAX_LISTED_ISSUES} more)`);
  const message = `${flowLabel(spec, name)} is invalid: ${lines.join('; ')}`;
  const causes = issues.slice(0, MAX_LISTED_ISSUES).map((i) => ({ type: 'FieldValueInvalid', field: i.path, message: i.message }));
  return { uid, allowed: false, status: denial(message, { name, kind: KINDS.Flow.plural, causes }) };
}

const isRevisionRequest = (r: AdmissionRequest): boolean =>
  (r.kind?.group === GROUP && r.kind.kind === KINDS.FlowRevision.kind) || (r.resource?.group === GROUP && r.resource.resource === KINDS.FlowRevision.plural);

/** A FlowRevision is a snapshot: once written its spec never changes (metadata such as labels may). */
function reviewRevision(request: AdmissionRequest): AdmissionResponse {
  const { uid } = request;
  if (request.operation !== 'UPDATE' || request.subResource) return { uid, allowed: true };
  const spec = (o: unknown) => JSON.stringify(isObj(o) ? o.spec ?? null : null);
  if (spec(request.object) === spec(request.oldObject)) return { uid, allowed: true };
  const message = `FlowRevision "${request.name ?? ''}" is immutable: save the Flow to make a new revision`;
  return { uid, allowed: false, status: denial(message, { name: request.name ?? '', kind: KINDS.FlowRevision.plural, causes: [{ type: 'FieldValueForbidden', field: 'spec', message }] }) };
}

/** Decides one admission request: Flow CREATE/UPDATE are validated, FlowRevision specs cannot change, the rest passes. */
export function reviewFlow(request: AdmissionRequest, opts: AdmissionOptions = {}): AdmissionResponse {
  const { uid } = request;
  if (isRevisionRequest(request)) return reviewRevision(request);
  if (!isFlowRequest(request) || request.subResource || (request.operation !== 'CREATE' && request.operation !== 'UPDATE')) {
    return { uid, allowed: true };
  }
  const object = isObj(request.object) ? request.object : undefined;
  const meta = isObj(object?.metadata) ? object.metadata : {};
  const name = typeof meta.name === 'string' && meta.name ? meta.name : request.name || undefined;
  if (!object || !isObj(object.spec)) return deny(uid, name, undefined, [{ path: 'spec', message: 'a Flow needs a spec (the flow document: id, namespace, tasks...)' }]);
  let flow: { namespace: string; id: string };
  try {
    const ns = object.spec.namespace;
    flow = validateFlow(structuredClone(object.spec), isNamespaceId(ns) ? opts.inheritedDefaults?.(ns) ?? [] : []);
  } catch (err) {
    if (!(err instanceof FlowValidationError)) throw err;
    return deny(uid, name, object.spec, err.errors.map((i) => ({ path: specPath(i.path), message: i.message })));
  }
  const owner = opts.ownerOf?.(flow.namespace, flow.id);
  if (owner && owner !== name) {
    return deny(uid, name, object.spec, [{ path: 'spec.id', message: `Flow ${flow.namespace}.${flow.id} is already defined by Flow resource '${owner}'` }]);
  }
  const warnings: string[] = [];
  const before = request.operation === 'UPDATE' ? keyOf(request.oldObject) : undefined;
  if (before && (before.namespace !== flow.namespace || before.id !== flow.id)) {
    warnings.push(`spec.id/spec.namespace changed from ${before.namespace}.${before.id} to ${flow.namespace}.${flow.id}: this saves a new flow; ${before.namespace}.${before.id} stops being live (its revisions stay)`);
  }
  const response: AdmissionResponse = { uid, allowed: true };
  if (warnings.length) response.warnings = warnings.slice(0, MAX_WARNINGS).map((w) => (w.length > MAX_WARNING_CHARS ? `${w.slice(0, MAX_WARNING_CHARS - 3)}...` : w));
  return response;
}

/** Router with `POST /admission/flows`. */
export function createAdmissionRouter(opts: AdmissionOptions = {}): Router {
  const router = new Router();
  router.post(ADMISSION_PATH, async (ctx) => {
    const request = admissionRequest(await readJson(ctx, MAX_REVIEW_BYTES));
    const body: AdmissionReviewResponse = { apiVersion: REVIEW_API_VERSION, kind: 'AdmissionReview', response: reviewFlow(request, opts) };
    ctx.body = body;
  });
  return router;
}

/** A Koa app serving only the admission route (JSON errors: 400 for a malformed review, 404 elsewhere). */
export function createAdmissionApp(opts: AdmissionOptions = {}): Koa {
  const app = new Koa();
  app.silent = true;
  app.use(errorMiddleware);
  const router = createAdmissionRouter(opts);
  app.use(router.routes());
  app.use(router.allowedMethods());
  return app;
}
