// Route precedence of the API router, independent of registration order: where two routes can match the same URL,
// the one with a literal segment at the first position where they differ wins (`/executions/{id}/labels` over
// `/executions/{namespace}/{flowId}`, `/executions/kill/by-ids` over `/executions/{id}/kill`).
import type { Router } from '@koa/router';

/** Rank of each path segment: 1 for a literal, 0 for a `:param`. */
export function segmentRanks(path: string): number[] {
  return path.split('/').filter((s) => s !== '').map((s) => {
    if (/[*?{}()]/.test(s)) throw new Error(`Route '${path}': only literal and ':param' segments are supported (segment '${s}')`);
    return s.startsWith(':') ? 0 : 1;
  });
}

/** Lexicographic on segment ranks: of two routes that can match one URL, the more specific one sorts last. */
export function comparePrecedence(a: string, b: string): number {
  const ra = segmentRanks(a);
  const rb = segmentRanks(b);
  for (let i = 0; i < Math.min(ra.length, rb.length); i++) {
    if (ra[i] !== rb[i]) return ra[i]! - rb[i]!;
  }
  return ra.length - rb.length;
}

/**
 * Orders the layers of `router` (created with `exclusive: true`, where the last matching layer runs) so that the
 * most specific route wins. Call once, after every route is registered. Stable: routes of equal rank keep their order.
 */
export function orderRoutes(router: Router): void {
  if (router.opts.exclusive !== true) throw new Error('orderRoutes needs a router created with exclusive: true');
  for (const layer of router.stack) {
    if (typeof layer.path !== 'string') throw new Error('orderRoutes: regular-expression routes are not supported');
    if (layer.methods.length === 0) throw new Error(`orderRoutes: middleware layer '${layer.path}' would be chosen as a route`);
    segmentRanks(layer.path);
  }
  router.stack.sort((x, y) => comparePrecedence(x.path as string, y.path as string));
}
