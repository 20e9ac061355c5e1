// Test support: authorization by exactly the rules of the Helm chart's Roles (charts/flowpilot/templates/rbac.yaml), so
// tests that give each component its own token (operator, API, task Pods) prove the chart grants enough and no more.
// The Roles are those `helm template` renders (scripts/helm.ts: the devDependency's Helm 3); without a Helm binary
// (another platform), those of rbac.yaml read with its template directives dropped (its rules are literal).
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { findHelm, helmTemplate } from '../../scripts/helm.js';
import type { AuthzAttributes } from './test-server/index.js';

const ROOT = resolve(import.meta.dirname, '../..');
export const CHART = join(ROOT, 'charts/flowpilot');

export interface Rule { apiGroups: string[]; resources: string[]; verbs: string[] }
interface RbacDoc { kind?: string; metadata?: { name: string }; rules?: Rule[] }

/** Roles and ClusterRoles by name suffix: the names are `x-<suffix>` (ClusterRoles `x-x-<suffix>`), release x. */
function bySuffix(docs: RbacDoc[]): Record<string, Rule[]> {
  return Object.fromEntries(docs.filter((d) => d.kind === 'Role' || d.kind === 'ClusterRole')
    .map((d) => [d.metadata!.name.replace(/^x-(x-)?/, ''), d.rules ?? []]));
}

/** The Roles of rbac.yaml read without Helm: its template directives dropped, the other `{{ }}` replaced by x. */
export function chartRolesWithoutHelm(): Record<string, Rule[]> {
  const text = readFileSync(join(CHART, 'templates/rbac.yaml'), 'utf8')
    .replace(/\{\{-?\s*\/\*[\s\S]*?\*\/\s*-?\}\}/g, '')
    .split('\n').filter((l) => !/^\s*\{\{.*\}\}\s*$/.test(l)).join('\n').replace(/\{\{[^}]*\}\}/g, 'x');
  return bySuffix(parseAllDocuments(text).map((d) => d.toJS() as RbacDoc).filter(Boolean));
}

/** The Roles `helm template` renders (release x in namespace x, default values); throws when there is no Helm. */
export function chartRolesRendered(): Record<string, Rule[]> {
  const out = helmTemplate(CHART, { release: 'x', namespace: 'x', values: { fullnameOverride: 'x' } });
  return bySuffix(parseAllDocuments(out).map((d) => d.toJS() as RbacDoc).filter(Boolean));
}

let roles: Record<string, Rule[]> | undefined;

/** Where chartRoles() reads the Roles from (for messages). */
export function chartRolesSource(): string {
  const helm = findHelm();
  return helm.path ? `helm template (Helm ${helm.version})` : `rbac.yaml without template directives (no Helm: ${helm.reason})`;
}

/** The rules of the chart's Roles by name suffix (operator, operator-lease, api, task, inference-runner, auth). */
export function chartRoles(): Record<string, Rule[]> {
  roles ??= findHelm().path ? chartRolesRendered() : chartRolesWithoutHelm();
  return roles;
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
