// The block report matches a probe's [block] lines to the profile samples of their time span.
import { describe, expect, it } from 'vitest';
import { blockReport } from './profile-blocks.js';

const frame = (functionName: string, url = '') => ({ functionName, url });

describe('blockReport (profile-blocks.ts)', () => {
  // root -> processImmediate -> step (engine.ts) -> fork (run-index.ts); root -> (idle)
  const profile = {
    nodes: [
      { id: 1, callFrame: frame('(root)'), children: [2, 5] },
      { id: 2, callFrame: frame('processImmediate', 'node:internal/timers'), children: [3] },
      { id: 3, callFrame: frame('step', 'file:///x/operator/core/engine.ts'), children: [4] },
      { id: 4, callFrame: frame('fork', 'file:///x/operator/core/run-index.ts') },
      { id: 5, callFrame: frame('(idle)') },
    ],
    startTime: 1_000_000,
    // One sample per ms: idle for 10 ms, then 40 ms in step (30 of them in fork), then idle.
    samples: [...Array(10).fill(5), ...Array(10).fill(3), ...Array(30).fill(4), ...Array(10).fill(5)],
    timeDeltas: Array(60).fill(1000),
  };

  it('names what ran in a block, inclusive, without the generic frames', () => {
    const trace = '[block] 1051000 40.0\n[block] 1059000 3.0\nother output\n';
    const lines = blockReport(profile, trace, 10);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^\+0\.05 s, 40 ms: step@engine\.ts 40, fork@run-index\.ts 30/);
    expect(lines[0]).not.toMatch(/processImmediate|\(root\)|\(idle\)/);
  });

  it('a block outside the profile names nothing', () => {
    expect(blockReport(profile, '[block] 9000000 50.0\n', 10)).toEqual(['+8.00 s, 50 ms: ']);
  });
});
