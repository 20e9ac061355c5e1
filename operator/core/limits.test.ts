// The safety limits: defaults, environment overrides, refusals of malformed values, and errors naming the setting.
import { describe, expect, it } from 'vitest';
import { DEFAULT_LIMITS, LimitError, limitError, limitsFromEnv } from './limits.js';

describe('limits', () => {
  it('defaults apply when nothing is set', () => {
    expect(limitsFromEnv({})).toEqual(DEFAULT_LIMITS);
    expect(DEFAULT_LIMITS.expressionTimeoutMs).toBe(1000);
    expect(DEFAULT_LIMITS.expressionMaxBytes).toBe(10 * 1024 * 1024);
  });

  it('reads overrides', () => {
    expect(limitsFromEnv({ MAX_SUBFLOW_DEPTH: '3', EXPRESSION_TIMEOUT_MS: ' 250 ' })).toMatchObject({ maxSubflowDepth: 3, expressionTimeoutMs: 250 });
    expect(limitsFromEnv({ LOGS_MAX_LINES: '500' }).logsMaxLines).toBe(500);
    expect(DEFAULT_LIMITS.logsMaxLines).toBe(10_000);
  });

  it.each([['MAX_SUBFLOW_DEPTH', '0'], ['EXPRESSION_TIMEOUT_MS', '1.5'], ['MAX_TASK_RUNS_PER_EXECUTION', 'lots'], ['EXPRESSION_MAX_BYTES', '-1']])(
    '%s=%s is refused naming the variable', (env, value) => {
      expect(() => limitsFromEnv({ [env]: value })).toThrow(env);
    });

  it('a limit error names the setting', () => {
    const err = limitError('maxSubflowDepth', 'Subflow "call" at depth 11', { ...DEFAULT_LIMITS, maxSubflowDepth: 10 });
    expect(err).toBeInstanceOf(LimitError);
    expect(err.setting).toBe('MAX_SUBFLOW_DEPTH');
    expect(err.message).toBe('Subflow "call" at depth 11: over the limit of 10 (nesting depth of Subflow and ForEachItem executions under one root execution; setting MAX_SUBFLOW_DEPTH)');
  });
});
