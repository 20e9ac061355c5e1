// Flow concurrency limits through the API, whatever the start path: QUEUE waits for a slot, CANCEL and FAIL end the
// extra execution at once.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEmbedded, type Embedded } from '../support/embedded.js';

let env: Embedded;
beforeAll(async () => { env = await startEmbedded(); });
afterAll(async () => { await env?.close(); });

const flow = (id: string, behavior: string) => `id: ${id}
namespace: fixtures.concurrency
concurrency:
  limit: 1
  behavior: ${behavior}
tasks:
  - id: wait
    type: ai.service.plugin.scripts.shell.Commands
    commands: ["sleep 0.4"]
`;

describe('flow concurrency', () => {
  it.each([
    ['QUEUE', ['SUCCESS', 'SUCCESS', 'SUCCESS'], true],
    ['CANCEL', ['SUCCESS', 'CANCELLED', 'CANCELLED'], false],
    ['FAIL', ['SUCCESS', 'FAILED', 'FAILED'], false],
  ])('behavior %s', async (behavior, finals, queued) => {
    const id = `limit-${behavior.toLowerCase()}`;
    await env.createFlow(flow(id, behavior));
    const first = await env.execute('fixtures.concurrency', id);
    await env.waitFor(first.id, (e) => e.state.current === 'RUNNING');
    const second = await env.execute('fixtures.concurrency', id);
    const third = await env.execute('fixtures.concurrency', id, 'trigger');
    if (queued) {
      const s = await env.waitFor(second.id, (e) => e.state.current !== 'CREATED');
      expect(s.state.current).toBe('QUEUED');
    }
    const ends = [];
    for (const e of [first, second, third]) ends.push(await env.waitFor(e.id, (x) => ['SUCCESS', 'FAILED', 'CANCELLED'].includes(x.state.current)));
    expect(ends.map((e) => e.state.current)).toEqual(finals);
    if (queued) {
      // never two at once: each execution starts after the previous one ended
      const spans = ends.map((e) => [Date.parse(e.state.histories.find((h: any) => h.state === 'RUNNING').date), Date.parse(e.state.endDate)]);
      spans.sort((a, b) => a[0]! - b[0]!);
      for (let i = 1; i < spans.length; i++) expect(spans[i]![0]).toBeGreaterThanOrEqual(spans[i - 1]![1]!);
    }
  });
});
