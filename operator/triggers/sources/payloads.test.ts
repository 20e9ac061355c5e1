// Event payloads of the realtime and row triggers are data whose keys an external system chose (message JSON, AMQP
// headers, column names): decoded into prototype-free maps, so `__proto__` or `constructor` is an ordinary key; SQL
// parameter names are looked up as own keys only.
import { describe, expect, it } from 'vitest';
import { amqpMessageVariables, decodeAmqpBody } from './amqp.js';
import { decodePayload } from './mqtt.js';
import { plainRow } from './postgres-cdc-snapshot.js';
import { bindParameters } from './postgres-query.js';

const HOSTILE = '{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}},"ok":1}';

function expectOrdinaryKeys(value: unknown): void {
  expect(Object.getPrototypeOf(value)).toBeNull();
  expect(Object.keys(value as object)).toEqual(['__proto__', 'constructor', 'ok']);
  expect(Object.getPrototypeOf((value as Record<string, unknown>).constructor)).toBeNull();
  expect(({} as Record<string, unknown>).polluted).toBeUndefined();
}

describe('trigger payloads', () => {
  it('MQTT JSON messages', () => { expectOrdinaryKeys(decodePayload(Buffer.from(HOSTILE), 'JSON')); });

  it('AMQP JSON bodies and header tables', () => {
    expectOrdinaryKeys(decodeAmqpBody(Buffer.from(HOSTILE), 'JSON'));
    const headers = JSON.parse(HOSTILE) as Record<string, unknown>;
    const vars = amqpMessageVariables({ content: Buffer.from('x'), properties: { headers } as never }, 'STRING');
    expectOrdinaryKeys(vars.headers);
  });

  it('PostgreSQL named parameters: only own keys of `parameters` are bound (`:constructor` stays SQL text)', () => {
    expect(bindParameters('SELECT :constructor, :toString, :a', { a: 1 })).toEqual({ text: 'SELECT :constructor, :toString, $1', values: [1] });
    const own = JSON.parse('{"__proto__": "p", "constructor": "c"}') as Record<string, unknown>;
    expect(bindParameters('SELECT :__proto__, :constructor', own)).toEqual({ text: 'SELECT $1, $2', values: ['p', 'c'] });
  });

  it('PostgreSQL rows (column names chosen by the query)', () => {
    const row = plainRow(JSON.parse(HOSTILE) as Record<string, unknown>, new Set());
    expect(Object.getPrototypeOf(row)).toBeNull();
    expect(Object.keys(row!)).toEqual(['__proto__', 'constructor', 'ok']);
  });
});
