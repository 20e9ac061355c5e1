// Test support: authorization by exactly the rules of the Helm chart's Roles (charts/flowpilot/templates/rbac.yaml), so
// tests that give each component its own token (operator, API, task Pods) prove the chart grants enough and no more.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseAllDocuments } from 'yaml';
import type { AuthzAttributes } from './test-server/index.js';

const ROOT = resolve(import.meta.dirname, '../..');

interface Rule { apiGroups: string[]; resources: string[]; verbs: string[] }

/** The rules of the chart's Roles by name suffix (template directives dropped; the rules themselves are literal). */
export function chartRoles(): Record<string, Rule[]> {
  const text = readFileSync(join(ROOT, 'charts/flowpilot/templates/rbac.yaml'), 'utf8')
    .split('\n').filter((l) => !/^\s*\{\{.*\}\}\s*$/.test(l)).join('\n').replace(/\{\{[^}]*\}\}/g, 'x');
  const docs = parseAllDocuments(text).map((d) => d.toJS() as { kind: string; metadata: { name: string }; rules?: Rule[] });
  return Object.fromEntries(docs.filter((d) => d.kind === 'Role' || d.kind === 'ClusterRole').map((d) => [d.metadata.name.replace(/^x-(x-)?/, ''), d.rules ?? []]));
}

/** Users of the test server: `admin` (the test, the simulated node) may do anything; the others have their chart Roles. */
export const COMPONENT_ROLES: Record<string, string[]> = {
  operator: ['operator', 'operator-lease'],
  api: ['api', 'auth'],
  task: ['task'],
  'inference-runner': ['inference-runner'],
};

/** An `authorize` function for startKubeTestServer; denials are recorded for the test's error messages. */
export function chartAuthorizer(denied: string[] = []): (a: AuthzAttributes) => boolean {
  const roles = chartRoles();
  return (a) => {
    if (a.user === 'admin') return true;
    const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
    const ok = (COMPONENT_ROLES[a.user] ?? []).some((role) => (roles[role] ?? []).some((r) =>
      r.apiGroups.includes(a.group ?? '') && r.resources.includes(resource ?? '') && r.verbs.includes(a.verb)));
    if (!ok) denied.push(`${a.user}: ${a.verb} ${a.group ? `${a.group}/` : ''}${resource}`);
    return ok;
  };
}
