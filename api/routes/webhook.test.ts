// Tables for the webhook helpers: key comparison, trigger lookup and body parsing.
import { describe, expect, it } from 'vitest';
import type { Flow } from '../../operator/core/types.js';
import { findWebhook, keysEqual, webhookBody, WEBHOOK_TYPE } from './webhook.js';

describe('keysEqual', () => {
  it.each([
    ['abc', 'abc', true], ['abc', 'abd', false], ['abc', 'abcd', false], ['', '', true], ['é', 'é', true],
  ])('%s vs %s → %s', (a, b, expected) => { expect(keysEqual(a, b)).toBe(expected); });
});

describe('findWebhook', () => {
  const flow: Flow = {
    id: 'f', namespace: 'n', tasks: [],
    triggers: [
      { id: 'sched', type: 'ai.service.plugin.core.trigger.Schedule', key: 'k1' },
      { id: 'off', type: WEBHOOK_TYPE, key: 'k2', disabled: true },
      { id: 'on', type: WEBHOOK_TYPE, key: 'k2' },
      { id: 'kestra', type: 'io.kestra.plugin.core.trigger.Webhook', key: 'k3' },
    ],
  };
  it.each([
    ['k1', undefined], ['k2', 'on'], ['k3', 'kestra'], ['nope', undefined],
  ])('key %s → trigger %s', (key, id) => { expect(findWebhook(flow, key)?.id).toBe(id); });
});

describe('webhookBody', () => {
  it.each([
    ['', null], ['{"a":1}', { a: 1 }], [' [1,2] ', [1, 2]], ['{broken', '{broken'], ['42', '42'], ['hello', 'hello'],
  ])('%j → %j', (text, expected) => { expect(webhookBody(text)).toEqual(expected); });

  it('parses objects without prototypes: a `__proto__` key is an ordinary key', () => {
    const body = webhookBody('{"__proto__":{"polluted":true},"a":{"constructor":1}}') as Record<string, unknown>;
    expect(Object.getPrototypeOf(body)).toBeNull();
    expect(Object.keys(body)).toEqual(['__proto__', 'a']);
    expect(Object.getPrototypeOf(body.a)).toBeNull();
  });
});
