// The inference-related runnable plugins (S3 tasks and BatchCompletion) and their property schemas, for the
// plugin registry and the flow validator to register.
import { s3Plugins } from '../aws/s3.js';
import type { RunnablePlugin } from '../types.js';
import { batchCompletionPlugin } from './batch.js';

export { batchCompletionPlugin } from './batch.js';
export { inferenceTaskSchemas, INFERENCE_TASK_TYPES } from '../../model/schema-inference.js';
export { s3DeletePlugin, s3DownloadPlugin, s3ListPlugin, s3UploadPlugin } from '../aws/s3.js';

export const inferencePlugins: RunnablePlugin[] = [...s3Plugins, batchCompletionPlugin];
