// Tables for the storage prefix check of `/executions/{id}/file`.
import { describe, expect, it } from 'vitest';
import type { Execution } from '../../operator/core/types.js';
import { allowedPrefixes, uriAllowed } from './execution-stream.js';

const exec = {
  id: 'E1', namespace: 'a.b', flowId: 'f',
  parent: { executionId: 'P1', taskRunId: 't', namespace: 'p', flowId: 'pf' },
} as Execution;
const prefixes = allowedPrefixes(exec);

describe('uriAllowed', () => {
  it.each([
    ['kestra:///a.b/f/executions/E1/inputs/doc/x.txt', true],
    ['kestra:///a/b/f/executions/E1/outputs/o.csv', true],
    ['kestra:///p/pf/executions/P1/outputs/o.csv', true],
    ['kestra:///a.b/f/executions/E2/x', false],
    ['kestra:///a.b/f/executions/E1/../E2/x', false],
    ['kestra:///a.b/f/executions/E1/%2e%2e/E2/x', false],
    ['kestra:///a.b/f/executions/E1', false],
    ['file:///etc/passwd', false],
    ['kestra:///a.b/f/executions/E1/%zz', false],
  ])('%s → %s', (uri, expected) => { expect(uriAllowed(uri, prefixes)).toBe(expected); });
});
