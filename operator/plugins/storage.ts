// core.storage.Write: writes rendered `content` to a new internal-storage file and returns its `uri`.
import { randomUUID } from 'node:crypto';
import type { RunContext, TaskResult } from './types.js';
import { plugin, renderString } from './util.js';

async function runWrite(ctx: RunContext): Promise<TaskResult> {
  const content = renderString(ctx, ctx.task.content);
  if (content === undefined) throw new Error("Missing required property 'content'");
  let extension = renderString(ctx, ctx.task.extension) ?? '.ion';
  if (extension !== '' && !extension.startsWith('.')) extension = '.' + extension;
  if (/[/\\]/.test(extension)) throw new Error(`Invalid extension '${extension}'`);
  const uri = await ctx.storage.put(`${ctx.storagePrefix}/${randomUUID()}${extension}`, Buffer.from(content, 'utf8'));
  return { state: 'SUCCESS', outputs: { uri } };
}

export const storageWritePlugin = plugin('core.storage.Write', runWrite);
