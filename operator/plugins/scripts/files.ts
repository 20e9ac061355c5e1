// Script working-directory files (scripts and WorkingDirectory): renders and writes `inputFiles` (inline content or
// internal-storage URIs) safely inside the working dir, and uploads files matching `outputFiles` globs (and everything in outputDir) to storage.
import { createReadStream } from 'node:fs';
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { dict, dictFrom, parseJsonSafe } from '../../core/keyed.js';
import { regexTest } from '../../expr/index.js';
import type { RunContext } from '../types.js';
import { isRecord, renderString } from '../util.js';

/** Resolves `name` under `root`, refusing absolute paths and any escape through `..`. */
export function safeJoin(root: string, name: string): string {
  if (name === '' || isAbsolute(name)) throw new Error(`Invalid input file name '${name}'`);
  const full = resolve(root, name);
  const rel = relative(resolve(root), full);
  if (rel === '' || rel.startsWith('..') || isAbsolute(rel)) {
    throw new Error(`Invalid input file name '${name}': it must stay inside the working directory`);
  }
  return full;
}

function isStorageUri(v: string): boolean {
  return /^kestra:\/\/\/?\S+$/.test(v.trim());
}

/** A task's `inputFiles` (a map of name to content, or a template rendering to one as JSON), rendered. */
export function renderInputFiles(ctx: RunContext, raw: unknown, vars?: Record<string, unknown>): Record<string, unknown> {
  if (raw === undefined || raw === null) return {};
  if (typeof raw === 'string') {
    const parsed: unknown = parseJsonSafe(ctx.render(raw, vars));
    if (!isRecord(parsed)) throw new Error("Property 'inputFiles' must be a map of file name to content");
    return parsed;
  }
  if (!isRecord(raw)) throw new Error("Property 'inputFiles' must be a map of file name to content");
  return dictFrom(Object.entries(raw).map(([k, v]) => [ctx.render(k, vars), renderString(ctx, v, vars) ?? ''] as const));
}

/** Writes every input file; values that are internal-storage URIs are copied from storage. */
export async function writeInputFiles(ctx: RunContext, root: string, files: Record<string, unknown>): Promise<string[]> {
  const written: string[] = [];
  for (const [name, value] of Object.entries(files)) {
    const path = safeJoin(root, name);
    await mkdir(dirname(path), { recursive: true });
    const text = typeof value === 'string' ? value : JSON.stringify(value);
    const data = isStorageUri(text) ? await ctx.storage.get(text.trim()) : text;
    await writeFile(path, data);
    written.push(path);
  }
  return written;
}

/**
 * A glob (`*`, `**`, `?`, `{a,b}`, `[abc]`) as a test of whole `/` paths. It runs on RE2 (operator/expr/regex.ts): a
 * glob is a flow author's text, and nested `**` compile to patterns that backtrack exponentially on the host's RegExp.
 */
export function globToRegExp(glob: string): { test(path: string): boolean } {
  let re = '';
  let inGroup = false;
  for (let i = 0; i < glob.length; i++) {
    const c = glob[i]!;
    if (c === '*') {
      if (glob[i + 1] === '*') {
        const slash = glob[i + 2] === '/';
        re += slash ? '(?:.*/)?' : '.*';
        i += slash ? 2 : 1;
      } else re += '[^/]*';
    } else if (c === '?') re += '[^/]';
    else if (c === '{') { re += '(?:'; inGroup = true; }
    else if (c === '}' && inGroup) { re += ')'; inGroup = false; }
    else if (c === ',' && inGroup) re += '|';
    else if (c === '[') {
      const end = glob.indexOf(']', i + 1);
      if (end < 0) re += '\\[';
      else { re += '[' + glob.slice(i + 1, end).replace(/^!/, '^').replace(/\\/g, '\\\\') + ']'; i = end; }
    } else re += c.replace(/[.+^$()|\\/]/g, '\\$&');
  }
  return regexTest(re, 'whole', `outputFiles glob \`${glob}\``);
}

/** Every regular file under `root`, as `/`-separated paths relative to it. */
export async function listFiles(root: string, skip?: string): Promise<string[]> {
  const out: string[] = [];
  const walk = async (dir: string): Promise<void> => {
    let entries;
    try {
      entries = await readdir(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const full = join(dir, e.name);
      if (skip && full === skip) continue;
      if (e.isDirectory()) await walk(full);
      else if (e.isFile()) out.push(relative(root, full).split(sep).join('/'));
    }
  };
  await walk(root);
  return out.sort();
}

async function upload(ctx: RunContext, root: string, rel: string): Promise<string> {
  const storagePath = `${ctx.storagePrefix}/${rel.split('/').map(encodeURIComponent).join('/')}`;
  return ctx.storage.put(storagePath, createReadStream(join(root, ...rel.split('/'))));
}

/** Uploads files of the working dir matching the patterns, and every file of outputDir; returns name → URI. */
export async function collectOutputFiles(
  ctx: RunContext, workingDir: string, patterns: string[], outputDir?: string,
): Promise<Record<string, string>> {
  const result = dict<string>(); // file names are the task's (a file may be called `__proto__`)
  if (patterns.length > 0) {
    const regexps = patterns.map((p) => globToRegExp(p.replace(/^\.\//, '')));
    for (const rel of await listFiles(workingDir, outputDir)) {
      if (regexps.some((r) => r.test(rel))) result[rel] = await upload(ctx, workingDir, rel);
    }
  }
  if (outputDir) {
    for (const rel of await listFiles(outputDir)) result[rel] = await upload(ctx, outputDir, rel);
  }
  return result;
}
