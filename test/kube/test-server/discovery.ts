// Discovery documents (/api, /apis, /apis/<group>, resource lists, /version) built from the served resource types.
import type { ResourceType } from './resources.js';

export const KUBE_VERSION = { major: '1', minor: '31', gitVersion: 'v1.31.0-flowpilot-test-server', gitCommit: '', gitTreeState: 'clean', buildDate: '2026-01-01T00:00:00Z', goVersion: 'go1.22', compiler: 'gc', platform: 'linux/amd64' };

export function apiVersions(address: string): object {
  return { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: address }] };
}

function groupDoc(group: string, types: ResourceType[]): object {
  const versions = [...new Set(types.flatMap((t) => t.versions))];
  const preferred = types[0].versions[0];
  const gv = (v: string) => ({ groupVersion: `${group}/${v}`, version: v });
  return { kind: 'APIGroup', apiVersion: 'v1', name: group, versions: versions.map(gv), preferredVersion: gv(preferred) };
}

const byGroup = (types: ResourceType[]): Map<string, ResourceType[]> => {
  const m = new Map<string, ResourceType[]>();
  for (const t of types) if (t.group) m.set(t.group, [...(m.get(t.group) ?? []), t]);
  return m;
};

export function apiGroupList(types: ResourceType[]): object {
  return { kind: 'APIGroupList', apiVersion: 'v1', groups: [...byGroup(types)].map(([g, ts]) => groupDoc(g, ts)) };
}

export function apiGroup(types: ResourceType[], group: string): object | undefined {
  const ts = byGroup(types).get(group);
  return ts ? groupDoc(group, ts) : undefined;
}

export function resourceList(types: ResourceType[], group: string, version: string): object | undefined {
  const ts = types.filter((t) => t.group === group && t.versions.includes(version));
  if (!ts.length) return undefined;
  const resources: object[] = [];
  for (const t of ts) {
    resources.push({
      name: t.plural, singularName: t.singular, namespaced: t.namespaced, kind: t.kind, verbs: t.verbs,
      ...(t.shortNames.length ? { shortNames: t.shortNames } : {}), ...(t.categories ? { categories: t.categories } : {}),
    });
    if (t.status) resources.push({ name: `${t.plural}/status`, singularName: '', namespaced: t.namespaced, kind: t.kind, verbs: ['get', 'patch', 'update'] });
  }
  return { kind: 'APIResourceList', apiVersion: 'v1', groupVersion: group ? `${group}/${version}` : version, resources };
}
