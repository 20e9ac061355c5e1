// Binding an execution created without a revision (kubectl) to the flow's latest revision: a table of outcomes.
import { describe, expect, it } from 'vitest';
import { bindToRevision, newExecution } from './execution.js';
import type { Flow } from './types.js';

const flow: Flow = { id: 'f', namespace: 'n', revision: 3, labels: [{ key: 'team', value: 'a' }], tasks: [{ id: 't', type: 'x' }] } as Flow;
const now = new Date('2026-11-22T08:00:00Z');
const created = () => ({ ...newExecution({ id: 'e', flow: { ...flow, revision: 0, labels: [] } as Flow, inputs: { raw: '1' }, now }), flowRevision: 0 });

describe('bindToRevision', () => {
  it.each([
    ['the latest revision with resolved inputs', flow, { inputs: { n: 1 } }, 'CREATED', undefined],
    ['a missing flow fails', undefined, { inputs: {} }, 'FAILED', 'Flow n.f not found'],
    ['invalid inputs fail with the reason', flow, { error: 'Invalid inputs: inputs.n: expected a number' }, 'FAILED', 'Invalid inputs: inputs.n: expected a number'],
    ['a disabled flow fails', { ...flow, disabled: true }, { inputs: {} }, 'FAILED', 'Cannot execute a flow which is disabled'],
  ] as const)('%s', (_name, f, resolved, state, error) => {
    const exec = created();
    const bound = bindToRevision(exec, f as Flow | undefined, resolved, now);
    expect(bound.state.current).toBe(state);
    expect(bound.error).toBe(error);
    expect(exec.flowRevision).toBe(0); // the input record is not mutated
    if (f) expect(bound.flowRevision).toBe(3);
    if (f && 'inputs' in resolved) {
      expect(bound.inputs).toEqual(resolved.inputs);
      expect(bound.labels).toContainEqual({ key: 'team', value: 'a' });
    }
  });
});
