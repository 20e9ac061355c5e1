// Env of the Pods the operator creates (task and inference runner Pods): credentials only as references to their
// Secrets (RUNNER_ENV_FROM_SECRETS), found by name, by a URL password or inside a JSON setting; anything else copied.
import { describe, expect, it } from 'vitest';
import { inferenceRunnerEnv, isCredentialName, runnerEnv } from './config.js';

const REFS = JSON.stringify({
  S3_ACCESS_KEY_ID: { name: 'inf-s3', key: 'id' }, S3_SECRET_ACCESS_KEY: { name: 'inf-s3', key: 'secret' },
  AWS_SECRET_ACCESS_KEY: { name: 'aws', key: 'secret' }, INFERENCE_MODEL_GPT_API_KEY: { name: 'models', key: 'gpt' },
  LOG_STORE_URL: { name: 'logs', key: 'url' },
});

describe('isCredentialName', () => {
  it.each([
    ['S3_SECRET_ACCESS_KEY', true], ['AWS_ACCESS_KEY_ID', true], ['AWS_SESSION_TOKEN', true], ['INFERENCE_MODEL_GPT_API_KEY', true],
    ['GCS_PRIVATE_KEY', true], ['DB_PASSWORD', true], ['GOOGLE_APPLICATION_CREDENTIALS', true],
    ['AWS_WEB_IDENTITY_TOKEN_FILE', false], ['AWS_REGION', false], ['S3_ENDPOINT', false], ['INFERENCE_MODELS_DIR', false],
  ])('%s → %s', (name, expected) => { expect(isCredentialName(name)).toBe(expected); });
});

describe('inference runner Pods', () => {
  const env = {
    RUNNER_ENV_FROM_SECRETS: REFS, S3_ENDPOINT: 'http://s3:9000', S3_ACCESS_KEY_ID: 'AKIA-inference', S3_SECRET_ACCESS_KEY: 'inf-s3cr3t',
    AWS_SECRET_ACCESS_KEY: 'aws-s3cr3t', AWS_REGION: 'eu-west-1', INFERENCE_MODEL_GPT: 'openai:http://vllm:8000', INFERENCE_MODEL_GPT_API_KEY: 'sk-model',
    INFERENCE_THREADS: '2', STORAGE_S3_SECRET_ACCESS_KEY: 'not-for-inference', PATH: '/bin',
  };

  it('get every INFERENCE_/S3_/AWS_/GCS_ variable, credentials as secretKeyRefs only', () => {
    const out = inferenceRunnerEnv(env, 'flow');
    const text = JSON.stringify(out);
    for (const v of ['AKIA-inference', 'inf-s3cr3t', 'aws-s3cr3t', 'sk-model', 'not-for-inference']) expect(text).not.toContain(v);
    expect(out).toContainEqual({ name: 'S3_SECRET_ACCESS_KEY', valueFrom: { secretKeyRef: { name: 'inf-s3', key: 'secret' } } });
    expect(out).toContainEqual({ name: 'INFERENCE_MODEL_GPT_API_KEY', valueFrom: { secretKeyRef: { name: 'models', key: 'gpt' } } });
    expect(out).toContainEqual({ name: 'AWS_REGION', value: 'eu-west-1' });
    expect(out).toContainEqual({ name: 'INFERENCE_MODEL_GPT', value: 'openai:http://vllm:8000' });
    expect(out).toContainEqual({ name: 'WATCH_NAMESPACE', value: 'flow' });
    expect(out.map((e) => e.name)).not.toContain('PATH');
  });

  it('refuse a credential without a Secret reference, naming it (no literal instead)', () => {
    expect(() => inferenceRunnerEnv({ ...env, AWS_SESSION_TOKEN: 'tok' }, 'flow')).toThrow(/^AWS_SESSION_TOKEN holds a credential/);
    expect(() => inferenceRunnerEnv({ S3_ENDPOINT: 'http://user:pw@s3:9000' }, 'flow')).toThrow(/^S3_ENDPOINT \(a URL with a password\) holds a credential/);
    const config = JSON.stringify({ storage: { endpoint: 'http://s3', secretAccessKey: 'inline' } });
    expect(() => inferenceRunnerEnv({ INFERENCE_CONFIG: config }, 'flow')).toThrow(/^INFERENCE_CONFIG \(storage\.secretAccessKey\) holds a credential/);
    expect(inferenceRunnerEnv({ INFERENCE_CONFIG: JSON.stringify({ storage: { endpoint: 'http://s3' }, threads: 2 }) }, 'flow')[0]).toMatchObject({ name: 'INFERENCE_CONFIG' });
  });
});

describe('task Pods', () => {
  it('a log store URL with a password needs a reference; without a password it is copied', () => {
    expect(() => runnerEnv({ LOG_STORE_URL: 'postgres://u:pw@db/x' }, 'ns')).toThrow(/LOG_STORE_URL \(a URL with a password\)/);
    expect(runnerEnv({ LOG_STORE_URL: 'postgres://u@db/x' }, 'ns')).toContainEqual({ name: 'LOG_STORE_URL', value: 'postgres://u@db/x' });
    expect(runnerEnv({ LOG_STORE_URL: 'postgres://u:pw@db/x', RUNNER_ENV_FROM_SECRETS: REFS }, 'ns'))
      .toContainEqual({ name: 'LOG_STORE_URL', valueFrom: { secretKeyRef: { name: 'logs', key: 'url' } } });
  });

  it('get the operator\'s PLUGINS, so the runner registers the same task type packages', () => {
    expect(runnerEnv({ PLUGINS: 'flowpilot-plugin-hello' }, 'ns')).toContainEqual({ name: 'PLUGINS', value: 'flowpilot-plugin-hello' });
    expect(runnerEnv({}, 'ns').map((e) => e.name)).not.toContain('PLUGINS');
  });
});
