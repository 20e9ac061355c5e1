// The inference-related task types (S3 tasks and BatchCompletion), declared with definePlugin: the plugin catalog
// lists them, and the flow schema and the runnable registry derive from it.
import { s3Definitions } from '../aws/s3.js';
import type { PluginDefinition } from '../define.js';
import { batchCompletionDefinition } from './batch.js';

export { batchCompletionPlugin } from './batch.js';
export { s3DeletePlugin, s3DownloadPlugin, s3ListPlugin, s3UploadPlugin } from '../aws/s3.js';

export const inferenceDefinitions: PluginDefinition[] = [...s3Definitions, batchCompletionDefinition];
export const inferencePlugins = inferenceDefinitions.map((d) => d.runnable);
