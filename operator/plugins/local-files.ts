// core.storage.LocalFiles (deprecated in Kestra, which moved it into WorkingDirectory's inputFiles/outputFiles): writes
// `inputs` (file name → content or internal-storage URI) into the task's working directory (the enclosing
// WorkingDirectory's, shared with its other tasks) and stores the files matching the `outputs` globs, output `uris`
// (file name → URI). The same code as the scripts' inputFiles/outputFiles (scripts/files.ts).
import { FILES_MAP_OR_STRING } from '../model/schema-common.js';
import { definePlugin, p } from './define.js';
import { collectOutputFiles, renderInputFiles, writeInputFiles } from './scripts/files.js';

export const LOCAL_FILES_DEPRECATED = 'core.storage.LocalFiles is deprecated (Kestra 0.17): use the inputFiles and outputFiles of WorkingDirectory or of a script task';

export const localFilesDefinition = definePlugin({
  type: 'core.storage.LocalFiles',
  title: 'Local files (deprecated)',
  description: 'Kestra\'s former way to bring files into a working directory and store files from it (use the inputFiles and outputFiles of WorkingDirectory or of a script task). Writes `inputs`, then stores the files matching `outputs`.',
  properties: {
    // Rendered by the scripts' inputFiles code (a string is JSON text of the map).
    inputs: p.raw(FILES_MAP_OR_STRING).describe('Files to write: file name → content or kestra:/// URI.'),
    outputs: p.stringList().describe('Globs of the files to store.'),
  },
  outputs: { uris: { type: 'object', description: 'File name → kestra:/// URI of each stored file.' } },
  examples: [{ title: 'Write a file for the next task', code: 'id: files\ntype: ai.service.plugin.core.storage.LocalFiles\ninputs:\n  data.csv: "{{ outputs.download.uri }}"\n' }],
  async run(ctx, props) {
    if (props.inputs === undefined && props.outputs === undefined) throw new Error("core.storage.LocalFiles needs 'inputs' or 'outputs'");
    ctx.logger.warn(LOCAL_FILES_DEPRECATED);
    const dir = ctx.workingDir;
    let inputs: Record<string, unknown>;
    try {
      inputs = renderInputFiles(ctx, props.inputs);
    } catch (err) {
      throw new Error((err as Error).message.replace("'inputFiles'", "'inputs'"));
    }
    await writeInputFiles(ctx, dir, inputs);
    const uris = await collectOutputFiles(ctx, dir, props.outputs ?? []);
    return { state: 'SUCCESS', outputs: { uris } };
  },
});
export const localFilesPlugin = localFilesDefinition.runnable;
