// What every route receives: the stores plus the API's limits, with their defaults filled in.
import type { Renderer } from '../operator/core/engine-types.js';
import type { Execution } from '../operator/core/types.js';
import { DEFAULT_LIMITS, limitError, type Limits } from '../operator/core/limits.js';
import type { Stores } from '../operator/store/types.js';
import { NO_GRANTS, type NamespaceGrants } from '../operator/tenancy/namespaces.js';
import type { ConditionEvaluator } from '../operator/triggers/types.js';
import { DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_FILE_BYTES } from './body.js';
import { badRequest } from './errors.js';

export interface ApiOptions {
  stores: Stores;
  /** Limit for JSON/YAML/text bodies and multipart fields (default: `limits.apiMaxBodyBytes`, API_MAX_BODY_BYTES). */
  maxBodyBytes?: number;
  /** Limit for each uploaded file (default: `limits.apiMaxFileBytes`, API_MAX_FILE_BYTES). */
  maxFileBytes?: number;
  /** How long `?wait=true` waits for a terminal state before answering with the current one (default 5 min). */
  waitTimeoutMs?: number;
  /** Evaluates Webhook trigger `conditions` (the trigger service's evaluator; default: one without secrets). */
  conditions?: ConditionEvaluator;
  /** Renders Webhook trigger `inputs` with secrets (default: a renderer without secrets). */
  renderer?: Renderer;
  /** Namespaces a flow may reach beyond its own (ALLOWED_NAMESPACES): FILE inputs given as URIs follow it. */
  grants?: NamespaceGrants;
  /** The safety limits (operator/core/limits.ts; default their defaults): LOGS_MAX_LINES bounds a log answer. */
  limits?: Limits;
  /**
   * Stores a new execution (state CREATED) and resolves, once it is durable, with it as created in the form the store
   * keeps. Default: a plain create (cluster mode: the controller hears of it through its watch). Embedded mode passes
   * the controller's eager start (Controller.admit): the first step is taken before the one create.
   */
  admit?: (execution: Execution) => Promise<Execution>;
}

export type ApiDeps = Required<Omit<ApiOptions, 'conditions' | 'renderer'>> & Pick<ApiOptions, 'conditions' | 'renderer'>;

export function resolveDeps(o: ApiOptions): ApiDeps {
  return {
    stores: o.stores,
    maxBodyBytes: o.maxBodyBytes ?? o.limits?.apiMaxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    maxFileBytes: o.maxFileBytes ?? o.limits?.apiMaxFileBytes ?? DEFAULT_MAX_FILE_BYTES,
    waitTimeoutMs: o.waitTimeoutMs ?? 5 * 60_000,
    grants: o.grants ?? NO_GRANTS,
    limits: o.limits ?? DEFAULT_LIMITS,
    admit: o.admit ?? ((execution) => o.stores.executions.create(execution).then((s) => s.execution)),
    ...(o.conditions ? { conditions: o.conditions } : {}),
    ...(o.renderer ? { renderer: o.renderer } : {}),
  };
}

/** Refuses a bulk request over API_BULK_MAX_ITEMS (`what`: executions, keys), naming `field`. */
export function checkBulkCount(deps: ApiDeps, n: number, what: string, field: string): void {
  if (n > deps.limits.apiBulkMaxItems) {
    throw badRequest(limitError('apiBulkMaxItems', `${n} ${what} in one bulk request`, deps.limits).message, field);
  }
}

