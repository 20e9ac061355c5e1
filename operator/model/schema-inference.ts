// JSON schemas of the inference task types (S3 tasks, BatchCompletion) for the flow validator. Kept free of
// runtime dependencies; the plugins in operator/plugins/{aws,inference} implement them.
import { STRING, TPL_BOOL, TPL_NUMBER, taskSchema, type Schema } from './schema-common.js';
import { PREFIX } from './task-types.js';

const P = PREFIX;
const T = {
  upload: `${P}aws.s3.Upload`, download: `${P}aws.s3.Download`, list: `${P}aws.s3.List`, delete: `${P}aws.s3.Delete`,
  batch: `${P}inference.BatchCompletion`,
} as const;

/** Full type names of the inference tasks. */
export const INFERENCE_TASK_TYPES: string[] = Object.values(T);

/** Connection properties of every S3 task (Kestra's AWS plugin names). */
const S3_CONNECTION: Record<string, Schema> = {
  region: STRING, accessKeyId: STRING, secretKeyId: STRING, sessionToken: STRING, endpointOverride: STRING,
  forcePathStyle: TPL_BOOL, stsRoleArn: STRING, stsEndpointOverride: STRING, stsRoleSessionName: STRING,
  compatibilityMode: TPL_BOOL, bucket: STRING,
};

const LIST_OR_EXPR: Schema = { type: ['array', 'string'] };

/** Property definitions of the inference task types (keys: full type names), as flow-validator task schemas. */
export const inferenceTaskSchemas: Record<string, Schema> = {
  [T.upload]: taskSchema({ ...S3_CONNECTION, key: STRING, from: STRING, content: STRING, contentType: STRING }, ['bucket', 'key']),
  [T.download]: taskSchema({ ...S3_CONNECTION, key: STRING }, ['bucket', 'key']),
  [T.list]: taskSchema({ ...S3_CONNECTION, prefix: STRING, delimiter: STRING, regexp: STRING, maxKeys: TPL_NUMBER, filter: STRING }, ['bucket']),
  [T.delete]: taskSchema({ ...S3_CONNECTION, key: STRING, errorOnMissing: TPL_BOOL }, ['bucket', 'key']),
  [T.batch]: taskSchema({
    url: STRING, token: STRING, model: STRING, question: STRING, systemPrompt: STRING, inputs: LIST_OR_EXPR,
    inputJsonFile: STRING, storageProvider: STRING, bucket: STRING, session: STRING, maxTokens: TPL_NUMBER,
    roleArn: STRING, region: STRING, structuredOutput: { type: ['object', 'string'] }, returnOutput: TPL_BOOL,
    seed: TPL_NUMBER, pollInterval: STRING, maxDuration: STRING, idempotencyKey: STRING,
  }, ['url', 'token', 'model', 'bucket', 'session']),
};
