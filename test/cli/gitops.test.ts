// examples/gitops renders with `kubectl kustomize` (kubectl from PATH, else the one in the devDependency's layer zip:
// nothing is downloaded), every rendered Flow passes `flowpilot flow validate -` (the CLI as a child process), every
// manifest matches its CRD schema, and the Argo CD and Flux examples point at that folder.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { crdValidators } from '../../operator/kube/crd-validate.js';
import { kvName } from '../../operator/kube/names.js';
import { findKubectl } from '../../scripts/helm.js';
import { cli, ROOT } from './run-cli.js';

const DIR = join(ROOT, 'examples/gitops');
const kubectl = findKubectl();

describe('examples/gitops', { timeout: 120_000 }, () => {
  it.skipIf(!kubectl.path)(`renders with kubectl kustomize and every Flow validates with the CLI${kubectl.path ? '' : ` (skipped: ${kubectl.reason})`}`, async () => {
    const rendered = execFileSync(kubectl.path!, ['kustomize', DIR], { encoding: 'utf8' });
    const manifests = parseAllDocuments(rendered).map((d) => d.toJS() as { kind: string; metadata: { name: string; namespace: string; labels: Record<string, string> }; spec: Record<string, unknown> });
    expect(manifests.map((m) => m.kind).sort()).toEqual(['Flow', 'Flow', 'KVPair']);
    const validators = crdValidators();
    for (const m of manifests) {
      expect(validators[m.kind]!.validate(m), m.metadata.name).toEqual([]);
      expect(m.metadata.namespace).toBe('flowpilot');
      expect(m.metadata.labels['app.kubernetes.io/part-of']).toBe('company-flows');
      if (m.kind === 'KVPair') expect(m.metadata.name).toBe(kvName(m.spec.namespace as string, m.spec.key as string));
    }
    const r = await cli(['flow', 'validate', '-'], {}, { input: rendered });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain('<stdin>:1: ok: company.team.hello');
    expect(r.stdout).toBe('2 flows valid\n');
    // A broken Flow in the rendered stream is caught with its line.
    const broken = rendered.replace('type: io.kestra.plugin.core.log.Log', 'type: io.kestra.plugin.core.log.Nope');
    const bad = await cli(['flow', 'validate', '-'], {}, { input: broken });
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/<stdin>:\d+: error: tasks\[0\]\.type: Unknown task type/);
  });

  it('the Argo CD Application and the Flux Kustomization apply this folder', () => {
    const argo = parseAllDocuments(readFileSync(join(DIR, 'argocd/application.yaml'), 'utf8')).map((d) => d.toJS());
    expect(argo[0]).toMatchObject({ kind: 'Application', spec: { source: { path: 'examples/gitops' }, destination: { namespace: 'flowpilot' } } });
    const flux = parseAllDocuments(readFileSync(join(DIR, 'flux/kustomization.yaml'), 'utf8')).map((d) => d.toJS());
    expect(flux.map((d) => d.kind)).toEqual(['GitRepository', 'Kustomization']);
    expect(flux[1]).toMatchObject({ spec: { path: './examples/gitops', prune: true, sourceRef: { name: flux[0].metadata.name } } });
  });
});
