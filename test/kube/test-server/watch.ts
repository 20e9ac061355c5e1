// Watch streams: newline-delimited JSON events over a chunked HTTP response, resumable from a resourceVersion inside
// the history window (older: an ERROR event with a 410 Expired Status), with selectors, bookmarks and timeouts.
import type { ServerResponse } from 'node:http';
import { ApiError } from './errors.js';
import { apiVersionOf, typeKey, type KubeObject, type ResourceType } from './resources.js';
import { parseFieldSelector, parseLabelSelector } from './selectors.js';
import type { Store, StoreEvent } from './store.js';

export interface WatchParams {
  namespace?: string;
  version: string;
  resourceVersion?: string;
  labelSelector?: string;
  fieldSelector?: string;
  allowWatchBookmarks: boolean;
  timeoutSeconds?: number;
  /** Watch-list: the current objects as ADDED, then a BOOKMARK annotated k8s.io/initial-events-end. */
  sendInitialEvents?: boolean;
}

export interface WatchSettings {
  maxTimeoutSeconds: number;
  bookmarkIntervalMs: number;
  /** Events reach this watch this many ms late (a loaded server's watch cache lags behind its writes). */
  delayMs?: number;
  /** End expired watches by closing the connection without the final chunk, as a real server behind a proxy or load balancer is seen to. */
  abruptEnd?: boolean;
}

/** Start streaming; returns a function that ends the stream (used by the server's closeWatches). */
export function serveWatch(res: ServerResponse, store: Store, t: ResourceType, p: WatchParams, s: WatchSettings, onEnd: () => void): () => void {
  const key = typeKey(t.group, t.plural);
  const byLabel = parseLabelSelector(p.labelSelector);
  const byField = parseFieldSelector(p.fieldSelector, t.fieldSelectors);
  const match = (o: KubeObject | undefined): boolean => o !== undefined && (p.namespace === undefined || o.metadata.namespace === p.namespace) && byLabel(o.metadata.labels) && byField(o);
  const apiVersion = apiVersionOf(t.group, p.version);
  const send = (type: string, object: unknown): void => { res.write(`${JSON.stringify({ type, object })}\n`); };
  const present = (o: KubeObject): KubeObject => ({ ...o, apiVersion, kind: t.kind });

  res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private', 'Transfer-Encoding': 'chunked' });
  res.flushHeaders();

  const rvParam = p.resourceVersion;
  let fromRv: number | undefined;
  if (rvParam !== undefined && rvParam !== '' && rvParam !== '0') {
    if (!/^\d+$/.test(rvParam)) {
      send('ERROR', new ApiError(400, 'BadRequest', `invalid resource version "${rvParam}"`).toStatus());
      res.end();
      onEnd();
      return () => {};
    }
    fromRv = Number(rvParam);
  }
  let backlog: StoreEvent[] = [];
  if (fromRv !== undefined && !p.sendInitialEvents) {
    const since = fromRv > store.resourceVersion ? [] : store.eventsSince(key, fromRv);
    if (since === 'expired') {
      send('ERROR', new ApiError(410, 'Expired', `too old resource version: ${fromRv} (${store.oldestResumable(key) + 1})`).toStatus());
      res.end();
      onEnd();
      return () => {};
    }
    backlog = since;
  }

  let ended = false;
  const deliver = (ev: StoreEvent): void => {
    if (ended) return;
    const now = match(ev.object);
    const before = ev.type === 'MODIFIED' && match(ev.prev);
    if (ev.type === 'ADDED' && now) send('ADDED', present(ev.object));
    else if (ev.type === 'DELETED' && (now || match(ev.prev))) send('DELETED', present(ev.object));
    else if (ev.type === 'MODIFIED') {
      if (now && before) send('MODIFIED', present(ev.object));
      else if (now) send('ADDED', present(ev.object));
      else if (before) send('DELETED', present(ev.object));
    }
  };
  const delay = s.delayMs ?? 0;
  const pendingDelays = new Set<NodeJS.Timeout>();
  const late = (ev: StoreEvent): void => {
    const tm = setTimeout(() => { pendingDelays.delete(tm); deliver(ev); }, delay);
    pendingDelays.add(tm);
  };
  const unsubscribe = store.addWatcher({ typeKey: key, deliver: delay > 0 ? late : deliver });
  if (fromRv === undefined || p.sendInitialEvents) {
    for (const o of store.list(key, p.namespace)) if (match(o)) send('ADDED', present(o));
    if (p.sendInitialEvents) {
      send('BOOKMARK', { kind: t.kind, apiVersion, metadata: { resourceVersion: String(store.resourceVersion), annotations: { 'k8s.io/initial-events-end': 'true' } } });
    }
  } else {
    for (const ev of backlog) deliver(ev);
  }

  const timers: NodeJS.Timeout[] = [];
  const end = (expired = false): void => {
    if (ended) return;
    ended = true;
    unsubscribe();
    for (const tm of timers) clearTimeout(tm);
    for (const tm of pendingDelays) clearTimeout(tm);
    if (expired && s.abruptEnd) res.socket?.destroy();
    else res.end();
    onEnd();
  };
  const timeout = Math.min(p.timeoutSeconds && p.timeoutSeconds > 0 ? p.timeoutSeconds : s.maxTimeoutSeconds, s.maxTimeoutSeconds);
  timers.push(setTimeout(() => end(true), timeout * 1000));
  if (p.allowWatchBookmarks) {
    const iv = setInterval(() => send('BOOKMARK', { kind: t.kind, apiVersion, metadata: { resourceVersion: String(store.resourceVersion) } }), s.bookmarkIntervalMs);
    timers.push(iv);
  }
  res.on('close', () => end());
  return () => end();
}
