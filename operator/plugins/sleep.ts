// core.flow.Sleep: waits for an ISO 8601 `duration`, stopping at once when the task is killed.
import { definePlugin, p } from './define.js';
import { durationMs, failed } from './util.js';

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

export const sleepDefinition = definePlugin({
  type: 'core.flow.Sleep',
  title: 'Sleep',
  description: 'Waits for `duration`, stopping at once when the task is killed or times out.',
  properties: { duration: p.durationText().required().describe('How long to wait (ISO 8601, e.g. PT5S).') },
  examples: [{ title: 'Wait five seconds', code: 'id: wait\ntype: ai.service.plugin.core.flow.Sleep\nduration: PT5S\n' }],
  async run(ctx, props) {
    const ms = durationMs(props.duration);
    if (ms < 0) throw new Error('Sleep duration must not be negative');
    return (await wait(ms, ctx.signal)) ? { state: 'SUCCESS' } : failed('Task killed');
  },
});
export const sleepPlugin = sleepDefinition.runnable;
