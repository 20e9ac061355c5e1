// Object metadata rules shared by create and update: name / label syntax, server-set fields, generation, object size.
import { randomBytes } from 'node:crypto';
import { ApiError, type StatusCause } from './errors.js';
import type { KubeObject, ResourceType } from './resources.js';
import { canon } from './patch.js';

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

const OBJECT_META_FIELDS = new Set(['name', 'generateName', 'namespace', 'selfLink', 'uid', 'resourceVersion', 'generation', 'creationTimestamp',
  'deletionTimestamp', 'deletionGracePeriodSeconds', 'labels', 'annotations', 'ownerReferences', 'finalizers', 'managedFields']);

/** Drop fields ObjectMeta does not have (the real server's decoder does). */
export function pruneMeta(meta: Record<string, unknown>): Record<string, unknown> {
  for (const k of Object.keys(meta)) if (!OBJECT_META_FIELDS.has(k)) delete meta[k];
  return meta;
}

/** Etcd's default request limit: the real server fails writes of bigger objects ("etcdserver: request is too large"). */
export const DEFAULT_MAX_OBJECT_BYTES = 1572864;

export const now = (): string => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');

const ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';
export function generateName(prefix: string): string {
  const bytes = randomBytes(5);
  let s = '';
  for (const b of bytes) s += ALPHABET[b % ALPHABET.length];
  return `${prefix.slice(0, 58)}${s}`;
}

function checkQualifiedKey(key: string, field: string): StatusCause[] {
  const slash = key.lastIndexOf('/');
  const prefix = slash >= 0 ? key.slice(0, slash) : '';
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  const causes: StatusCause[] = [];
  if (slash >= 0 && (prefix.length > 253 || !DNS_SUBDOMAIN.test(prefix))) {
    causes.push({ reason: 'FieldValueInvalid', field, message: `Invalid value: "${key}": prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.'` });
  }
  if (name.length > 63 || !QUALIFIED_NAME.test(name)) {
    causes.push({ reason: 'FieldValueInvalid', field, message: `Invalid value: "${key}": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character, and be no more than 63 characters` });
  }
  return causes;
}

/** Metadata validation the real server applies to every kind. */
export function validateMeta(t: ResourceType, obj: KubeObject): StatusCause[] {
  const m = obj.metadata;
  const causes: StatusCause[] = [];
  const name = m.name;
  if (typeof name !== 'string' || name === '') {
    causes.push({ reason: 'FieldValueRequired', field: 'metadata.name', message: 'Required value: name or generateName is required' });
  } else {
    const label = t.plural === 'namespaces';
    const max = label ? 63 : 253;
    if (name.length > max || !(label ? DNS_LABEL : DNS_SUBDOMAIN).test(name)) {
      causes.push({ reason: 'FieldValueInvalid', field: 'metadata.name', message: `Invalid value: "${name}": a lowercase RFC 1123 ${label ? 'label' : 'subdomain'} must consist of lower case alphanumeric characters, '-'${label ? '' : " or '.'"}, and must start and end with an alphanumeric character (at most ${max} characters)` });
    }
  }
  for (const [k, v] of Object.entries((m.labels ?? {}) as Record<string, unknown>)) {
    causes.push(...checkQualifiedKey(k, 'metadata.labels'));
    if (typeof v !== 'string' || v.length > 63 || !LABEL_VALUE.test(v)) {
      causes.push({ reason: 'FieldValueInvalid', field: 'metadata.labels', message: `Invalid value: "${String(v)}": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (at most 63 characters)` });
    }
  }
  for (const [k, v] of Object.entries((m.annotations ?? {}) as Record<string, unknown>)) {
    causes.push(...checkQualifiedKey(k, 'metadata.annotations'));
    if (typeof v !== 'string') causes.push({ reason: 'FieldValueTypeInvalid', field: `metadata.annotations`, message: `Invalid value: annotation values must be strings` });
  }
  const annBytes = Object.entries((m.annotations ?? {}) as Record<string, string>).reduce((n, [k, v]) => n + k.length + String(v).length, 0);
  if (annBytes > 262144) causes.push({ reason: 'FieldValueTooLong', field: 'metadata.annotations', message: 'Too long: must have at most 262144 bytes' });
  (m.ownerReferences ?? []).forEach((r: Record<string, unknown>, i: number) => {
    for (const f of ['apiVersion', 'kind', 'name', 'uid']) {
      if (!r?.[f]) causes.push({ reason: 'FieldValueRequired', field: `metadata.ownerReferences[${i}].${f}`, message: 'Required value' });
    }
  });
  if ((m.ownerReferences ?? []).filter((r: Record<string, unknown>) => r?.controller === true).length > 1) {
    causes.push({ reason: 'FieldValueInvalid', field: 'metadata.ownerReferences', message: 'Invalid value: Only one reference can have Controller set to true' });
  }
  if (m.finalizers !== undefined && !Array.isArray(m.finalizers)) causes.push({ reason: 'FieldValueTypeInvalid', field: 'metadata.finalizers', message: 'Invalid value: must be a list' });
  return causes;
}

/** What `generation` tracks: everything but metadata, and but status when the type has a status subresource. */
export function specPart(t: ResourceType, obj: KubeObject): string {
  const rest: Record<string, unknown> = { ...obj };
  delete rest.metadata;
  delete rest.apiVersion;
  delete rest.kind;
  if (t.status) delete rest.status;
  return JSON.stringify(canon(rest));
}

/** Same object apart from resourceVersion (an update that changes nothing is not written, like the real server). */
export function sameObject(a: KubeObject, b: KubeObject): boolean {
  const strip = (o: KubeObject) => ({ ...o, apiVersion: undefined, metadata: { ...o.metadata, resourceVersion: undefined } });
  return JSON.stringify(canon(strip(a))) === JSON.stringify(canon(strip(b)));
}

export function checkSize(obj: KubeObject, maxBytes: number): void {
  if (Buffer.byteLength(JSON.stringify(obj)) > maxBytes) throw new ApiError(500, 'InternalError', 'etcdserver: request is too large');
}
