// React hooks over the API client (api.ts): `useApi` loads data for a page (loading, error, reload; the call is
// aborted when its inputs change or the page leaves), `useSse` follows a server-sent event route while mounted, and
// `useUrlFilters` keeps a list page's filters in the URL.
import { useCallback, useEffect, useRef, useState } from 'react';
import { useSearchParams } from 'react-router';
import { followSse, type SseEvent, type SseOptions } from './api';

export interface Loaded<T> { data?: T; error?: unknown; loading: boolean; reload(): void }

/** Runs `load` whenever `deps` change (or `reload()` is called) and keeps the latest answer. */
export function useApi<T>(load: (signal: AbortSignal) => Promise<T>, deps: unknown[]): Loaded<T> {
  const [state, setState] = useState<{ data?: T; error?: unknown; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    const ctrl = new AbortController();
    setState((s) => ({ ...s, loading: true }));
    load(ctrl.signal).then(
      (data) => { if (!ctrl.signal.aborted) setState({ data, loading: false }); },
      (error) => { if (!ctrl.signal.aborted) setState((s) => ({ data: s.data, error, loading: false })); },
    );
    return () => ctrl.abort();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { ...state, reload };
}

/**
 * Follows `path` (or nothing when undefined) while the component is mounted; `onEvent` may change between renders.
 * Returns the last connection error (cleared by the next event), for an ErrorBanner.
 */
export function useSse(path: string | undefined, onEvent: (e: SseEvent) => void, opts: Omit<SseOptions, 'onEvent' | 'onError'> = {}): { error?: unknown } {
  const handler = useRef(onEvent);
  handler.current = onEvent;
  const [error, setError] = useState<unknown>();
  const isEnd = opts.isEnd;
  useEffect(() => {
    if (!path) return undefined;
    const s = followSse(path, {
      ...opts, isEnd,
      onEvent: (e) => { setError(undefined); handler.current(e); },
      onError: (err) => setError(err),
    });
    return () => s.stop();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [path]);
  return { error };
}

/**
 * A list page's filters kept in the URL's query: `value(key)`, and `set(key, value)` (empty removes it) which also
 * returns to the first page. `search` is the text of the `q` box, applied after the user pauses typing (or at once
 * with `applySearch()`, on Enter).
 */
export interface UrlFilters {
  value(key: string): string; set(key: string, value: string): void;
  search: string; setSearch(text: string): void; applySearch(): void;
}

export function useUrlFilters(): UrlFilters {
  const [params, setParams] = useSearchParams();
  const q = params.get('q') ?? '';
  const [search, setSearch] = useState(q);
  useEffect(() => setSearch(q), [q]);
  // The latest query, also for a change made before the next render and for the pending typing timer: built from a
  // render's own `params`, a change would undo the ones made since that render (a level chosen right after a search
  // was reset by the search box's timer).
  const latest = useRef(params);
  latest.current = params;
  const set = (key: string, value: string) => {
    const next = new URLSearchParams(latest.current);
    if (value) next.set(key, value); else next.delete(key);
    next.delete('page');
    latest.current = next;
    setParams(next);
  };
  useEffect(() => {
    if (search.trim() === q) return undefined;
    const t = setTimeout(() => { if ((latest.current.get('q') ?? '') !== search.trim()) set('q', search.trim()); }, 300);
    return () => clearTimeout(t);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [search]);
  return { value: (key) => params.get(key) ?? '', set, search, setSearch, applySearch: () => set('q', search.trim()) };
}
