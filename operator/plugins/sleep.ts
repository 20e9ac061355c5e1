// core.flow.Sleep: waits for an ISO 8601 `duration`, stopping at once when the task is killed.
import type { RunContext, TaskResult } from './types.js';
import { durationMs, failed, plugin, requireString } from './util.js';

function wait(ms: number, signal: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    const onAbort = (): void => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

async function runSleep(ctx: RunContext): Promise<TaskResult> {
  const ms = durationMs(requireString(ctx, 'duration'));
  if (ms < 0) throw new Error('Sleep duration must not be negative');
  return (await wait(ms, ctx.signal)) ? { state: 'SUCCESS' } : failed('Task killed');
}

export const sleepPlugin = plugin('core.flow.Sleep', runSleep);
