// React hooks over the API client (api.ts): `useApi` loads data for a page (loading, error, reload; the call is
// aborted when its inputs change or the page leaves) and `useSse` follows a server-sent event route while mounted.
import { useCallback, useEffect, useRef, useState } from 'react';
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
