// Public entry of the in-process Kubernetes API test server used by the cluster-mode tests.
export { startKubeTestServer, type KubeTestServer, type KubeTestServerOptions, type KubeTestServerStats } from './server.js';
export type { AuthzAttributes, TokenUser } from './auth.js';
export { checkCrdDir, compileCrd, loadCrdFiles } from './schema.js';
export type { ValidatingWebhook } from './admission.js';
