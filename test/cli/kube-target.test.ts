// The kubectl plugin's target from a real kubeconfig file (@kubernetes/client-node parses it): the context's namespace
// and user token, the defaults, options winning, a missing context named. The port-forward itself needs a cluster
// (`kubectl port-forward`), which cannot run here: it is not covered by a test.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, describe, expect, it } from 'vitest';
import { kubeMode } from '../../cli/context.js';
import { kubeTarget } from '../../cli/kube.js';

const dir = mkdtempSync(join(tmpdir(), 'flowpilot-kubeconfig-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function kubeconfig(): KubeConfig {
  const file = join(dir, 'config');
  writeFileSync(file, `apiVersion: v1
kind: Config
current-context: prod
clusters:
  - name: c
    cluster: { server: 'https://127.0.0.1:6443' }
users:
  - name: ci
    user: { token: sa-token-123 }
  - name: admin
    user: { client-certificate-data: AAAA, client-key-data: AAAA }
contexts:
  - name: prod
    context: { cluster: c, user: ci, namespace: orchestration }
  - name: certs
    context: { cluster: c, user: admin }
`);
  const kc = new KubeConfig();
  kc.loadFromFile(file);
  return kc;
}

describe('kubectl plugin target', () => {
  it('reads the current context: its namespace and its user\'s token', () => {
    expect(kubeTarget({}, kubeconfig())).toEqual({ context: 'prod', namespace: 'orchestration', service: 'flowpilot-api', port: 8080, token: 'sa-token-123' });
  });

  it('defaults the namespace to flowpilot, has no token for a certificate user, and lets options win', () => {
    expect(kubeTarget({ context: 'certs' }, kubeconfig())).toEqual({ context: 'certs', namespace: 'flowpilot', service: 'flowpilot-api', port: 8080, token: undefined });
    expect(kubeTarget({ namespace: 'x', service: 'my-api', port: 9090 }, kubeconfig())).toMatchObject({ namespace: 'x', service: 'my-api', port: 9090 });
  });

  it('names a context that does not exist', () => {
    expect(() => kubeTarget({ context: 'nope' }, kubeconfig())).toThrow(/kubeconfig has no context 'nope'/);
  });

  it('is on when the program is named kubectl-flowpilot, or with --kube', () => {
    expect(kubeMode({}, '/usr/local/bin/kubectl-flowpilot')).toBe(true);
    expect(kubeMode({}, '/usr/local/bin/flowpilot')).toBe(false);
    expect(kubeMode({ kube: true }, '/usr/local/bin/flowpilot')).toBe(true);
  });
});
