// Tests of the runnable plugin registry: canonical names, Kestra aliases, and no flowable types.
import { describe, expect, it } from 'vitest';
import { runnableTaskTypes } from '../model/index.js';
import { canonicalType, getRunnable, runnableTypes } from './index.js';

describe('runnable registry', () => {
  it('registers exactly the runnable types the flow validator knows, under the ai.service.plugin prefix', () => {
    expect(runnableTypes().sort()).toEqual([...runnableTaskTypes()].sort());
    expect(runnableTypes().every((t) => t.startsWith('ai.service.plugin.'))).toBe(true);
    for (const type of runnableTypes()) expect(getRunnable(type)?.type).toBe(type);
  });

  it('maps Kestra names to canonical ones and knows no flowable type', () => {
    expect(canonicalType('io.kestra.plugin.core.log.Log')).toBe('ai.service.plugin.core.log.Log');
    expect(getRunnable('io.kestra.core.tasks.log.Log')?.type).toBe('ai.service.plugin.core.log.Log');
    expect(getRunnable('io.kestra.plugin.fs.http.Request')?.type).toBe('ai.service.plugin.core.http.Request');
    expect(getRunnable('ai.service.plugin.core.flow.Sequential')).toBeUndefined();
    expect(getRunnable('nope')).toBeUndefined();
  });
});
