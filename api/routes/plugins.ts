// /api/v1/plugins (Kestra's shapes): the plugin list, a type's documentation with its property schema, and the JSON
// schema editors validate flows (or a task, or a trigger) with; all derived from the validator's flow schema.
import type { Router } from '@koa/router';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { appRoot } from '../../operator/app-root.js';
import { SCHEMA_TYPES, editorSchema, pluginDocumentation, pluginList, type SchemaType } from '../../operator/model/plugin-catalog.js';
import type { ApiDeps } from '../deps.js';
import { notFound } from '../errors.js';
import { queryBool } from '../query.js';

let version: string | undefined;
const appVersion = (): string =>
  (version ??= String((JSON.parse(readFileSync(join(appRoot(import.meta.url), 'package.json'), 'utf8')) as { version?: unknown }).version ?? ''));

/** Adds the plugin routes to `r` (mounted under /api/v1). */
export function registerPluginRoutes(r: Router, _deps: ApiDeps): void {
  r.get('/plugins', (ctx) => {
    ctx.body = pluginList(appVersion());
  });

  r.get('/plugins/schemas/:type', (ctx) => {
    const type = ctx.params.type as SchemaType;
    if (!(SCHEMA_TYPES as readonly string[]).includes(type)) {
      throw notFound(`Unknown schema type '${ctx.params.type}': expected one of ${SCHEMA_TYPES.join(', ')}`);
    }
    const schema = editorSchema(type);
    const { $ref, ...rest } = schema;
    ctx.set('Cache-Control', 'public, max-age=3600');
    ctx.body = queryBool(ctx, 'arrayOf') ? { ...rest, type: 'array', items: { $ref } } : schema;
  });

  r.get('/plugins/:cls', (ctx) => {
    const doc = pluginDocumentation(ctx.params.cls);
    if (!doc) throw notFound(`Unknown plugin type '${ctx.params.cls}'`);
    ctx.body = doc;
  });
}
