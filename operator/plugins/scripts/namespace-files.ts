// A task's `namespaceFiles` (Kestra's NamespaceFiles; scripts, and WorkingDirectory through
// controller/working-directory.ts): copies the namespace files it selects into the working directory before it runs. `include`/`exclude` are globs matched against `/path` as Kestra's
// PathMatcherPredicate does (a pattern starting with a word character matches at any depth), `namespaces` (default the
// flow's) are read through the task's view (its namespace, or one ALLOWED_NAMESPACES grants), `ifExists` decides what
// happens to a file already there, `folderPerNamespace` puts each namespace's files under a folder of its name.
import { access, mkdir, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import type { RunContext } from '../types.js';
import { isRecord, renderBool, renderStringList } from '../util.js';
import { globToRegExp, safeJoin } from './files.js';

type IfExists = 'OVERWRITE' | 'FAIL' | 'WARN' | 'IGNORE';

/** Kestra's glob rule: a pattern that starts with a word character may match at any depth (`**` + `/` prepended). */
function matcher(patterns: string[]): (path: string) => boolean {
  const tests = patterns.map((p) => globToRegExp(/^\w/.test(p) ? `**/${p}` : p));
  return (path) => tests.some((t) => t.test(path));
}

const exists = (file: string): Promise<boolean> => access(file).then(() => true, () => false);

/**
 * Copies the namespace files `cfg` selects (default: the task's own `namespaceFiles`) into `workingDir`; returns how
 * many were written.
 */
export async function loadNamespaceFiles(ctx: RunContext, workingDir: string, cfg: unknown = ctx.task.namespaceFiles): Promise<number> {
  if (cfg === undefined || cfg === null) return 0;
  if (!isRecord(cfg)) throw new Error("Property 'namespaceFiles' must be an object");
  if (!renderBool(ctx, cfg.enabled, true)) return 0;
  const include = renderStringList(ctx, cfg.include);
  const exclude = renderStringList(ctx, cfg.exclude);
  const namespaces = cfg.namespaces === undefined ? [ctx.flow.namespace] : renderStringList(ctx, cfg.namespaces);
  const ifExists = (cfg.ifExists ?? 'OVERWRITE') as IfExists;
  const perNamespace = renderBool(ctx, cfg.folderPerNamespace, false);
  const included = include.length ? matcher(include) : () => true;
  const excluded = exclude.length ? matcher(exclude) : () => false;
  let written = 0;
  const started = Date.now();
  for (const namespace of namespaces) {
    for (const file of await ctx.namespaceFiles.files(namespace)) {
      const slashed = `/${file.path}`;
      if (!included(slashed) || excluded(slashed)) continue;
      const target = safeJoin(workingDir, perNamespace ? `${namespace}/${file.path}` : file.path);
      if (await exists(target)) {
        if (ifExists === 'FAIL') throw new Error(`namespaceFiles: '${file.path}' already exists in the working directory (ifExists: FAIL)`);
        if (ifExists === 'WARN') { ctx.logger.warn(`namespaceFiles: '${file.path}' already exists in the working directory; kept`); continue; }
        if (ifExists === 'IGNORE') continue;
      }
      await mkdir(dirname(target), { recursive: true });
      await writeFile(target, await ctx.namespaceFiles.get(namespace, file.path));
      written++;
    }
  }
  ctx.logger.info(`Loaded ${written} namespace files from '${namespaces.join(', ')}' in ${Date.now() - started} ms`);
  return written;
}
