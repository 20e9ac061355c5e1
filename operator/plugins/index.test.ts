// Tests of the runnable plugin registry: canonical names, Kestra aliases, and no flowable types.
import { describe, expect, it } from 'vitest';
import { canonicalType, getRunnable, runnableTypes } from './index.js';

describe('runnable registry', () => {
  it('registers every runnable type of the contract under the ai.service.plugin prefix', () => {
    expect([...runnableTypes].sort()).toEqual([
      'core.debug.Return', 'core.execution.Labels', 'core.http.Download', 'core.http.Request', 'core.kv.Delete',
      'core.kv.Get', 'core.kv.Set', 'core.log.Log', 'core.templating.TemplatedTask', 'scripts.python.Commands',
      'scripts.python.Script', 'scripts.shell.Commands', 'scripts.shell.Script',
      ...['node', 'ruby', 'r', 'julia', 'powershell'].flatMap((l) => [`scripts.${l}.Script`, `scripts.${l}.Commands`]),
      'core.output.OutputValues', 'core.flow.Sleep', 'core.storage.Write', 'core.kv.GetKeys', 'core.execution.Assert',
    ].map((s) => 'ai.service.plugin.' + s).sort());
    for (const type of runnableTypes) expect(getRunnable(type)?.type).toBe(type);
  });

  it('maps Kestra names to canonical ones and knows no flowable type', () => {
    expect(canonicalType('io.kestra.plugin.core.log.Log')).toBe('ai.service.plugin.core.log.Log');
    expect(getRunnable('io.kestra.core.tasks.log.Log')?.type).toBe('ai.service.plugin.core.log.Log');
    expect(getRunnable('io.kestra.plugin.fs.http.Request')?.type).toBe('ai.service.plugin.core.http.Request');
    expect(getRunnable('ai.service.plugin.core.flow.Sequential')).toBeUndefined();
    expect(getRunnable('nope')).toBeUndefined();
  });
});
