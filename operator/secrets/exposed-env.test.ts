// Kestra's `envs`: which environment variables FLOW_ENV_VARS_PREFIX exposes to templates (none by default, never secrets),
// rendered through the service's real renderer (SQLite stores), and handed to task Pods in cluster mode.
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createSecretRenderer } from '../controller/secrets.js';
import { initExpressions } from '../expr/index.js';
import { buildJob } from '../kube/job-spec.js';
import { withExposedEnv } from '../kube/job-spec.js';
import type { Execution, TaskRun } from '../core/types.js';
import { openEmbeddedStores, type EmbeddedStores } from '../store/sqlite/index.js';
import { tempDir } from '../store/sqlite/test-fixtures.js';
import { envsVariable, exposedEnvVars } from './exposed-env.js';

const ENV = { FLOW_ENV_VARS_PREFIX: 'ENV_', ENV_MY_VAR: 'hello', ENV_Region: 'eu', PATH: '/bin', SECRET_TOKEN: 'czNjcjN0', API_TOKENS: 't' };

describe('exposed environment variables', () => {
  it('none without FLOW_ENV_VARS_PREFIX (the default)', () => {
    expect(exposedEnvVars({ ...ENV, FLOW_ENV_VARS_PREFIX: undefined })).toEqual({});
    expect(envsVariable({ FLOW_ENV_VARS_PREFIX: '', PATH: '/bin' })).toEqual({});
  });

  it('those with the prefix, as envs.<lowercase name without it>', () => {
    expect({ ...exposedEnvVars(ENV) }).toEqual({ ENV_MY_VAR: 'hello', ENV_Region: 'eu' });
    expect({ ...envsVariable(ENV) }).toEqual({ my_var: 'hello', region: 'eu' });
  });

  it('never secrets, whatever the prefix', () => {
    expect({ ...envsVariable({ FLOW_ENV_VARS_PREFIX: 'S', SECRET_TOKEN: 'x', FLOWPILOT_SECRET_A: 'y', S_OK: 'z' }) }).toEqual({ _ok: 'z' });
    expect({ ...envsVariable({ FLOW_ENV_VARS_PREFIX: 'FLOW', FLOWPILOT_SECRET_A: 'y', FLOW_X: '1' }) }).toEqual({ _x: '1' }); // nor the setting
  });
});

describe('envs in templates', () => {
  let stores: EmbeddedStores | undefined;
  let tmp: ReturnType<typeof tempDir> | undefined;
  beforeAll(async () => { await initExpressions(); });
  afterEach(async () => { await stores?.close(); tmp?.remove(); stores = undefined; });

  it('renders envs.<name> when the prefix exposes it; without the prefix `envs` is undefined', async () => {
    tmp = tempDir();
    stores = await openEmbeddedStores(tmp.dir);
    const vars = { flow: { id: 'f', namespace: 'n' } };
    expect(createSecretRenderer(stores, ENV).render('{{ envs.my_var }}-{{ envs.region }}', vars)).toBe('hello-eu');
    expect(() => createSecretRenderer(stores!, { ...ENV, FLOW_ENV_VARS_PREFIX: undefined }).render('{{ envs.my_var }}', vars)).toThrow(/envs/);
    expect(() => createSecretRenderer(stores!, ENV).render('{{ envs.secret_token }}', vars)).toThrow();
  });

  it("Kestra's env(name, default): the envs entry, else the default (null), and nothing without the prefix", async () => {
    tmp = tempDir();
    stores = await openEmbeddedStores(tmp.dir);
    const vars = { flow: { id: 'f', namespace: 'n' } };
    const r = createSecretRenderer(stores, ENV);
    expect(r.render("{{ env('my_var') }}|{{ env('nope', 'd') }}|{{ env('PATH', 'none') }}|{{ env('secret_token') ?? 'null' }}", vars)).toBe('hello|d|none|null');
    expect(createSecretRenderer(stores, { ...ENV, FLOW_ENV_VARS_PREFIX: undefined }).render("{{ env('my_var', 'unset') }}", vars)).toBe('unset');
  });
});

describe('task Pods (cluster mode)', () => {
  it('get the exposed variables and the setting, nothing else of the operator', () => {
    const exec = { id: 'Ex1', namespace: 'n', flowId: 'f', taskRunList: [] } as unknown as Execution;
    const run = { id: 'Tr1', taskId: 't' } as unknown as TaskRun;
    const settings = withExposedEnv({ runnerImage: 'runner:1', env: { S3_ENDPOINT: 'http://s3' } }, ENV);
    const job = buildJob({ namespace: 'ns', exec, run, attempt: 1, task: { id: 't', type: 'ai.service.plugin.core.log.Log', message: 'm' }, inputUri: 'kestra:///x', settings });
    const env = Object.fromEntries((job.spec!.template.spec!.containers[0]!.env ?? []).map((e) => [e.name, e.value]));
    expect(env).toMatchObject({ S3_ENDPOINT: 'http://s3', FLOW_ENV_VARS_PREFIX: 'ENV_', ENV_MY_VAR: 'hello', ENV_Region: 'eu' });
    expect(env.SECRET_TOKEN).toBeUndefined();
    expect(env.API_TOKENS).toBeUndefined();
    expect(withExposedEnv({ runnerImage: 'r' }, { PATH: '/bin' })).toEqual({ runnerImage: 'r' });
  });
});
