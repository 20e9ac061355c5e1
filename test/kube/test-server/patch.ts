// PATCH bodies: JSON merge patch (RFC 7386), a strategic merge patch subset (named lists merged by key), JSON patch (RFC 6902).
import { ApiError, badRequest } from './errors.js';

type Json = unknown;
type Obj = Record<string, Json>;
const isObj = (v: Json): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
const clone = <T>(v: T): T => (v === undefined ? v : structuredClone(v));

export function mergePatch(target: Json, patch: Json): Json {
  if (!isObj(patch)) return clone(patch);
  const out: Obj = isObj(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    else out[k] = mergePatch(out[k], v);
  }
  return out;
}

/** Merge keys of the lists a strategic merge patch merges element-wise (pod / job specs); other lists are replaced. */
const MERGE_KEYS: Record<string, string> = {
  containers: 'name', initContainers: 'name', ephemeralContainers: 'name', volumes: 'name', env: 'name',
  volumeMounts: 'mountPath', ports: 'containerPort', imagePullSecrets: 'name', ownerReferences: 'uid', conditions: 'type',
  hostAliases: 'ip', volumeDevices: 'devicePath',
};
const SCALAR_SET_LISTS = new Set(['finalizers']);

export function strategicMergePatch(target: Json, patch: Json): Json {
  if (!isObj(patch)) return clone(patch);
  if (patch.$patch === 'replace') { const p = { ...patch }; delete p.$patch; return clone(p); }
  if (patch.$patch === 'delete') return undefined;
  const out: Obj = isObj(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (k.startsWith('$setElementOrder/') || k.startsWith('$deleteFromPrimitiveList/') || k === '$retainKeys' || k === '$patch') {
      if (k.startsWith('$deleteFromPrimitiveList/') && Array.isArray(v)) {
        const name = k.slice('$deleteFromPrimitiveList/'.length);
        if (Array.isArray(out[name])) out[name] = (out[name] as Json[]).filter((x) => !v.includes(x));
      }
      continue;
    }
    if (v === null) { delete out[k]; continue; }
    const key = MERGE_KEYS[k];
    if (key && Array.isArray(v) && Array.isArray(out[k])) {
      const list = [...(out[k] as Json[])];
      for (const item of v) {
        if (!isObj(item) || item[key] === undefined) { list.push(clone(item)); continue; }
        const i = list.findIndex((x) => isObj(x) && x[key] === item[key]);
        if (item.$patch === 'delete') { if (i >= 0) list.splice(i, 1); continue; }
        if (i >= 0) list[i] = strategicMergePatch(list[i], item);
        else list.push(strategicMergePatch({}, item));
      }
      out[k] = list;
    } else if (SCALAR_SET_LISTS.has(k) && Array.isArray(v) && Array.isArray(out[k])) {
      out[k] = [...new Set([...(out[k] as Json[]), ...v])];
    } else {
      const merged = strategicMergePatch(out[k], v);
      if (merged === undefined) delete out[k];
      else out[k] = merged;
    }
  }
  return out;
}

const unescape = (s: string): string => s.replace(/~1/g, '/').replace(/~0/g, '~');

function parsePointer(ptr: string): string[] {
  if (ptr === '') return [];
  if (!ptr.startsWith('/')) throw badRequest(`invalid JSON pointer: "${ptr}"`);
  return ptr.slice(1).split('/').map(unescape);
}

const patchFailed = (msg: string): ApiError => new ApiError(422, 'Invalid', msg);

function getAt(doc: Json, path: string[]): Json {
  let cur = doc;
  for (const p of path) {
    if (Array.isArray(cur)) cur = cur[Number(p)];
    else if (isObj(cur)) cur = cur[p];
    else return undefined;
  }
  return cur;
}

function parentOf(doc: Json, path: string[], ptr: string): { parent: Obj | Json[]; key: string } {
  const parent = getAt(doc, path.slice(0, -1));
  if (!isObj(parent) && !Array.isArray(parent)) throw patchFailed(`doc is missing path: "${ptr}": missing value`);
  return { parent, key: path[path.length - 1] };
}

function arrayIndex(arr: Json[], key: string, ptr: string, forAdd: boolean): number {
  if (forAdd && key === '-') return arr.length;
  if (!/^(0|[1-9][0-9]*)$/.test(key)) throw patchFailed(`invalid array index "${key}" in "${ptr}"`);
  const i = Number(key);
  if (i > arr.length || (!forAdd && i === arr.length)) throw patchFailed(`index out of range: "${ptr}"`);
  return i;
}

function add(doc: Json, ptr: string, value: Json): Json {
  const path = parsePointer(ptr);
  if (path.length === 0) return clone(value);
  const { parent, key } = parentOf(doc, path, ptr);
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, key, ptr, true), 0, clone(value));
  else parent[key] = clone(value);
  return doc;
}

function remove(doc: Json, ptr: string): Json {
  const path = parsePointer(ptr);
  if (path.length === 0) return undefined;
  const { parent, key } = parentOf(doc, path, ptr);
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, key, ptr, false), 1);
  else {
    if (!(key in parent)) throw patchFailed(`unable to remove nonexistent key: ${key}: missing value`);
    delete parent[key];
  }
  return doc;
}

const deepEqual = (a: Json, b: Json): boolean => JSON.stringify(canon(a)) === JSON.stringify(canon(b));
function canon(v: Json): Json {
  if (Array.isArray(v)) return v.map(canon);
  if (isObj(v)) return Object.fromEntries(Object.keys(v).sort().map((k) => [k, canon(v[k])]));
  return v;
}

export function jsonPatch(target: Json, ops: Json): Json {
  if (!Array.isArray(ops)) throw badRequest('json patch must be an array of operations');
  let doc = clone(target);
  for (const op of ops) {
    if (!isObj(op) || typeof op.op !== 'string' || typeof op.path !== 'string') throw badRequest('invalid json patch operation');
    const path = op.path;
    switch (op.op) {
      case 'add': doc = add(doc, path, op.value); break;
      case 'remove': doc = remove(doc, path); break;
      case 'replace': {
        if (getAt(doc, parsePointer(path)) === undefined && path !== '') throw patchFailed(`replace operation does not apply: doc is missing key: ${path}: missing value`);
        doc = remove(doc, path);
        doc = add(doc, path, op.value);
        break;
      }
      case 'move': case 'copy': {
        if (typeof op.from !== 'string') throw badRequest(`${op.op} operation needs "from"`);
        const v = getAt(doc, parsePointer(op.from));
        if (v === undefined) throw patchFailed(`${op.op} operation does not apply: doc is missing from path: ${op.from}: missing value`);
        if (op.op === 'move') doc = remove(doc, op.from);
        doc = add(doc, path, v);
        break;
      }
      case 'test': {
        const v = getAt(doc, parsePointer(path));
        if (!deepEqual(v, op.value)) throw patchFailed(`testing value ${path} failed: test failed`);
        break;
      }
      default: throw badRequest(`unknown json patch operation "${op.op}"`);
    }
  }
  return doc;
}

export { deepEqual, canon };
