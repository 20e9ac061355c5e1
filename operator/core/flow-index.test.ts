// The engine evaluates exactly the flowable types the flow validator accepts, each with a resolver.
import { expect, it } from 'vitest';
import { FLOWABLE_TYPES } from '../model/index.js';
import { FLOWABLE } from './flow-index.js';
import { RESOLVERS } from './flowables.js';

it('knows the same flowable types as the model, and resolves each', () => {
  expect(Object.values(FLOWABLE).sort()).toEqual([...FLOWABLE_TYPES].sort());
  for (const type of FLOWABLE_TYPES) expect(RESOLVERS[type], type).toBeTypeOf('function');
});
