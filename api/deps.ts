// What every route receives: the stores plus the API's limits, with their defaults filled in.
import type { Stores } from '../operator/store/types.js';
import { DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_FILE_BYTES } from './body.js';

export interface ApiOptions {
  stores: Stores;
  /** Limit for JSON/YAML/text bodies and multipart fields (default 10 MiB). */
  maxBodyBytes?: number;
  /** Limit for each uploaded file (default 1 GiB). */
  maxFileBytes?: number;
  /** How long `?wait=true` waits for a terminal state before answering with the current one (default 5 min). */
  waitTimeoutMs?: number;
}

export type ApiDeps = Required<ApiOptions>;

export function resolveDeps(o: ApiOptions): ApiDeps {
  return {
    stores: o.stores,
    maxBodyBytes: o.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES,
    maxFileBytes: o.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES,
    waitTimeoutMs: o.waitTimeoutMs ?? 5 * 60_000,
  };
}
