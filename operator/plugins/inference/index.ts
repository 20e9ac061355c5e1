// The inference-related runnable plugins (S3 tasks and BatchCompletion) and their property schemas, for the
// plugin registry and the flow validator to register.
import { STRING, TPL_BOOL, TPL_NUMBER, taskSchema, type Schema } from '../../model/schema-common.js';
import { s3DeletePlugin, s3DownloadPlugin, s3ListPlugin, s3Plugins, s3UploadPlugin } from '../aws/s3.js';
import type { RunnablePlugin } from '../types.js';
import { batchCompletionPlugin } from './batch.js';

export { batchCompletionPlugin } from './batch.js';
export { s3DeletePlugin, s3DownloadPlugin, s3ListPlugin, s3UploadPlugin } from '../aws/s3.js';

export const inferencePlugins: RunnablePlugin[] = [...s3Plugins, batchCompletionPlugin];

/** Connection properties of every S3 task (Kestra's AWS plugin names). */
const S3_CONNECTION: Record<string, Schema> = {
  region: STRING, accessKeyId: STRING, secretKeyId: STRING, sessionToken: STRING, endpointOverride: STRING,
  forcePathStyle: TPL_BOOL, stsRoleArn: STRING, stsEndpointOverride: STRING, stsRoleSessionName: STRING,
  compatibilityMode: TPL_BOOL, bucket: STRING,
};

const LIST_OR_EXPR: Schema = { type: ['array', 'string'] };

/** Property definitions of the inference task types (keys: full type names), as flow-validator task schemas. */
export const inferenceTaskSchemas: Record<string, Schema> = {
  [s3UploadPlugin.type]: taskSchema({ ...S3_CONNECTION, key: STRING, from: STRING, content: STRING, contentType: STRING }, ['bucket', 'key']),
  [s3DownloadPlugin.type]: taskSchema({ ...S3_CONNECTION, key: STRING }, ['bucket', 'key']),
  [s3ListPlugin.type]: taskSchema({ ...S3_CONNECTION, prefix: STRING, delimiter: STRING, regexp: STRING, maxKeys: TPL_NUMBER, filter: STRING }, ['bucket']),
  [s3DeletePlugin.type]: taskSchema({ ...S3_CONNECTION, key: STRING, errorOnMissing: TPL_BOOL }, ['bucket', 'key']),
  [batchCompletionPlugin.type]: taskSchema({
    url: STRING, token: STRING, model: STRING, question: STRING, systemPrompt: STRING, inputs: LIST_OR_EXPR,
    inputJsonFile: STRING, storageProvider: STRING, bucket: STRING, session: STRING, maxTokens: TPL_NUMBER,
    roleArn: STRING, region: STRING, structuredOutput: { type: ['object', 'string'] }, returnOutput: TPL_BOOL,
    seed: TPL_NUMBER, pollInterval: STRING, maxDuration: STRING, idempotencyKey: STRING,
  }, ['url', 'token', 'model', 'bucket', 'session']),
};
