// GET /api/v1/configs: Kestra's ConfigController answer (what its UI and SDK read first): the server version and which
// optional features exist here, filled from what this server has; the search filters each resource takes come from
// the one table the searches validate with (operator/store/filters.ts).
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Router } from '@koa/router';
import { appRoot } from '../../operator/app-root.js';
import { FIELD_OPS, RESOURCE_FIELDS, type FilterField } from '../../operator/store/filters.js';
import { SYSTEM_NAMESPACE } from '../filters.js';

const VERSION = (JSON.parse(readFileSync(join(appRoot(import.meta.url), 'package.json'), 'utf8')) as { version: string }).version;
/** Kestra persists an instance uuid; this server makes one per process (nothing is reported anywhere with it). */
const INSTANCE_UUID = randomUUID();

/** Kestra's QueryFilter.Resource names of our searches. */
const RESOURCE_NAMES = { flows: 'FLOW', executions: 'EXECUTION', logs: 'LOG', triggers: 'TRIGGER' } as const;

const fieldInfo = (field: FilterField) => ({
  name: field, value: field, operations: FIELD_OPS[field].map((op) => ({ name: op, value: op })),
});

/** `env`: the server's settings (basic auth is on when BASIC_AUTH_USERNAME is set). */
export function configsJson(env: Record<string, string | undefined> = process.env): Record<string, unknown> {
  return {
    uuid: INSTANCE_UUID,
    version: VERSION,
    commitId: null,
    commitDate: null,
    isCustomDashboardsEnabled: false,
    isTaskRunEnabled: false,
    isAnonymousUsageEnabled: false,
    isTemplateEnabled: false,
    isUiAnonymousUsageEnabled: false,
    isAiEnabled: false,
    isBasicAuthEnabled: (env.BASIC_AUTH_USERNAME ?? '') !== '',
    isConcurrencyViewEnabled: false,
    environment: null,
    url: null,
    systemNamespace: SYSTEM_NAMESPACE,
    hiddenLabelsPrefixes: [],
    resourceToFilters: (Object.keys(RESOURCE_NAMES) as (keyof typeof RESOURCE_NAMES)[]).map((r) => ({
      name: RESOURCE_NAMES[r], fields: RESOURCE_FIELDS[r].map(fieldInfo),
    })),
  };
}

/** Adds GET /configs to `r` (mounted under /api/v1). */
export function registerConfigRoutes(r: Router): void {
  r.get('/configs', (ctx) => { ctx.body = configsJson(); });
}
