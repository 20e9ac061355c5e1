// Namespaces as a tree (`a.b.c` has the parents `a.b` and `a`) and what a flow inherits from the stored ones: their
// variables (the nearest wins, maps merged) and their plugin defaults (one layer per namespace, nearest first); and
// the check of a namespace document given to the API. Pure.
import type { Flow, NamespaceContext, NamespaceSpec, PluginDefault } from '../core/types.js';
import type { ValidationIssue } from './errors.js';
import { deepMerge } from './plugin-defaults.js';
import { NAMESPACE_PATTERN } from './schema-common.js';
import { reservedNameIssues } from './semantic-keys.js';

const NAMESPACE_RE = new RegExp(NAMESPACE_PATTERN);
/** The longest namespace a flow may have (the flow schema's bound). */
export const NAMESPACE_MAX_LENGTH = 150;

/** A valid namespace id (Kestra's pattern, at most NAMESPACE_MAX_LENGTH characters): safe to walk up its tree. */
export const isNamespaceId = (s: unknown): s is string => typeof s === 'string' && s.length <= NAMESPACE_MAX_LENGTH && NAMESPACE_RE.test(s);

/** `a.b.c` → `['a', 'a.b', 'a.b.c']` (Kestra's NamespaceUtils.asTree). */
export function namespaceTree(namespace: string): string[] {
  const parts = namespace.split('.');
  return parts.map((_, i) => parts.slice(0, i + 1).join('.'));
}

/** The namespace and its parents, nearest first: `a.b.c` → `['a.b.c', 'a.b', 'a']`. */
export const namespaceChain = (namespace: string): string[] => namespaceTree(namespace).reverse();

/** What a stored namespace gives the flows below it. */
export interface Inheritable { id: string; variables: Record<string, unknown>; pluginDefaults: PluginDefault[] }

/** The context of stored namespaces given nearest first; undefined when none is stored. */
export function namespaceContextOf(stored: Inheritable[]): NamespaceContext | undefined {
  if (stored.length === 0) return undefined;
  const variables = stored.reduceRight<Record<string, unknown>>((acc, ns) => deepMerge(acc, ns.variables), {});
  return { variables, pluginDefaults: stored.map((ns) => ns.pluginDefaults) };
}

/** The flow as it runs under `context` (a copy), or the flow itself when there is none. */
export function withNamespaceContext(flow: Flow, context: NamespaceContext | undefined): Flow {
  return context ? { ...flow, namespaceContext: context } : flow;
}

type Obj = Record<string, unknown>;
const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Kestra Enterprise fields of a Namespace we do not implement: accepted when null or empty (not set), refused otherwise. */
const UNSUPPORTED = [
  'allowedNamespaces', 'allowedTriggers', 'storageIsolation', 'secretIsolation', 'workerGroup', 'storageType',
  'storageConfiguration', 'secretType', 'secretReadOnly', 'secretConfiguration', 'outputsInInternalStorage',
] as const;
const KNOWN = new Set<string>(['id', 'description', 'variables', 'pluginDefaults', 'deleted', 'disabled', ...UNSUPPORTED]);
const unset = (v: unknown): boolean => v === undefined || v === null || v === false || (Array.isArray(v) && v.length === 0);

/** Problems of one plugin default (Kestra's PluginDefault: type, values, forced). */
function pluginDefaultIssues(d: unknown, path: string): ValidationIssue[] {
  if (!isObj(d)) return [{ path, message: 'must be a map with type and values' }];
  const out: ValidationIssue[] = [];
  if (typeof d.type !== 'string' || d.type === '') out.push({ path: `${path}.type`, message: 'must be a non-empty string (a task type or a type prefix)' });
  if (!isObj(d.values)) out.push({ path: `${path}.values`, message: 'must be a map of property values' });
  if (d.forced !== undefined && d.forced !== null && typeof d.forced !== 'boolean') out.push({ path: `${path}.forced`, message: 'must be a boolean' });
  for (const k of Object.keys(d)) if (!['type', 'values', 'forced'].includes(k)) out.push({ path: `${path}.${k}`, message: 'is not a property of a plugin default (type, values, forced)' });
  return out;
}

/**
 * A namespace document (the JSON body of POST / PUT /namespaces) checked and normalized: id as in `pathId` when given,
 * Kestra's pattern; description a string; variables a map; pluginDefaults a list of {type, values, forced}; no
 * reserved key anywhere. Enterprise-only fields are accepted only unset. Otherwise every issue found.
 */
export function validateNamespace(doc: unknown, pathId?: string): { spec: NamespaceSpec } | { issues: ValidationIssue[] } {
  if (!isObj(doc)) return { issues: [{ path: '', message: 'a namespace must be a JSON object' }] };
  const issues: ValidationIssue[] = [];
  const id = doc.id ?? pathId;
  if (!isNamespaceId(id)) {
    issues.push({ path: 'id', message: `must match ${NAMESPACE_PATTERN} (at most ${NAMESPACE_MAX_LENGTH} characters)` });
  } else if (pathId !== undefined && id !== pathId) {
    issues.push({ path: 'id', message: `'${id}' differs from the namespace of the path ('${pathId}')` });
  }
  if (doc.description !== undefined && doc.description !== null && typeof doc.description !== 'string') issues.push({ path: 'description', message: 'must be a string' });
  if (doc.variables !== undefined && doc.variables !== null && !isObj(doc.variables)) issues.push({ path: 'variables', message: 'must be a map' });
  const defaults = doc.pluginDefaults ?? [];
  if (!Array.isArray(defaults)) issues.push({ path: 'pluginDefaults', message: 'must be a list of {type, values, forced}' });
  else defaults.forEach((d, i) => issues.push(...pluginDefaultIssues(d, `pluginDefaults[${i}]`)));
  if (doc.deleted === true) issues.push({ path: 'deleted', message: 'is set by the service; a namespace is deleted with DELETE' });
  if (doc.disabled === true) issues.push({ path: 'disabled', message: 'namespaces cannot be disabled here' });
  for (const f of UNSUPPORTED) {
    if (!unset(doc[f])) issues.push({ path: f, message: 'is a Kestra Enterprise setting this service does not implement (cross-namespace access: ALLOWED_NAMESPACES)' });
  }
  for (const k of Object.keys(doc)) if (!KNOWN.has(k)) issues.push({ path: k, message: 'is not a property of a namespace' });
  issues.push(...reservedNameIssues(doc));
  if (issues.length > 0) return { issues };
  const spec: NamespaceSpec = {
    id: id as string,
    variables: isObj(doc.variables) ? doc.variables : {},
    pluginDefaults: (defaults as Obj[]).map((d) => ({ type: d.type as string, values: d.values as Obj, ...(d.forced === true ? { forced: true } : {}) })),
  };
  if (typeof doc.description === 'string') spec.description = doc.description;
  return { spec };
}
