// The trigger service: components start in order with the shared dependencies and stop in reverse order; a component
// failing to start stops those already started; the default set holds every kind of trigger.
import { describe, expect, it } from 'vitest';
import { defaultTriggerComponents, startTriggerService } from './service.js';
import type { TriggerComponent, TriggerServiceDeps } from './types.js';

function recorder(log: string[], name: string, failStart = false): TriggerComponent {
  return {
    name,
    async start(deps) {
      log.push(`start ${name} ${deps.env.MARK}`);
      if (failStart) throw new Error(`${name} cannot start`);
    },
    async stop() { log.push(`stop ${name}`); },
  };
}

// Components under test only record calls, so the dependencies are plain placeholders (test double).
const deps = { env: { MARK: 'm' }, clock: () => new Date(), onError: () => {} } as unknown as TriggerServiceDeps;

describe('trigger service (test double components)', () => {
  it('starts in order and stops in reverse order', async () => {
    const log: string[] = [];
    const service = await startTriggerService(deps, [recorder(log, 'a'), recorder(log, 'b')]);
    await service.stop();
    await service.stop(); // idempotent
    expect(log).toEqual(['start a m', 'start b m', 'stop b', 'stop a']);
  });

  it('a failed start stops the components already started and throws', async () => {
    const log: string[] = [];
    await expect(startTriggerService(deps, [recorder(log, 'a'), recorder(log, 'b', true), recorder(log, 'c')])).rejects.toThrow('b cannot start');
    expect(log).toEqual(['start a m', 'start b m', 'stop a']);
  });

  it('the default components cover conditions, schedules, flow triggers, polling and realtime triggers', () => {
    expect(defaultTriggerComponents().map((c) => c.name)).toHaveLength(4);
    expect(defaultTriggerComponents().map((c) => c.name)).toContain('schedule');
  });
});
