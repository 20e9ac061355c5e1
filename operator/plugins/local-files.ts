// core.storage.LocalFiles (deprecated in Kestra, which moved it into WorkingDirectory's inputFiles/outputFiles): writes
// `inputs` (file name → content or internal-storage URI) into the task's working directory (the enclosing
// WorkingDirectory's, shared with its other tasks) and stores the files matching the `outputs` globs, output `uris`
// (file name → URI). The same code as the scripts' inputFiles/outputFiles (scripts/files.ts).
import { collectOutputFiles, renderInputFiles, writeInputFiles } from './scripts/files.js';
import type { RunContext, TaskResult } from './types.js';
import { plugin, renderStringList } from './util.js';

export const LOCAL_FILES_DEPRECATED = 'core.storage.LocalFiles is deprecated (Kestra 0.17): use the inputFiles and outputFiles of WorkingDirectory or of a script task';

async function runLocalFiles(ctx: RunContext): Promise<TaskResult> {
  if (ctx.task.inputs === undefined && ctx.task.outputs === undefined) throw new Error("core.storage.LocalFiles needs 'inputs' or 'outputs'");
  ctx.logger.warn(LOCAL_FILES_DEPRECATED);
  const dir = ctx.workingDir;
  let inputs: Record<string, unknown>;
  try {
    inputs = renderInputFiles(ctx, ctx.task.inputs);
  } catch (err) {
    throw new Error((err as Error).message.replace("'inputFiles'", "'inputs'"));
  }
  await writeInputFiles(ctx, dir, inputs);
  const uris = await collectOutputFiles(ctx, dir, renderStringList(ctx, ctx.task.outputs));
  return { state: 'SUCCESS', outputs: { uris } };
}

export const localFilesPlugin = plugin('core.storage.LocalFiles', runLocalFiles);
