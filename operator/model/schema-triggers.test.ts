// Plugin trigger definitions checked when the flow is saved: required properties, enums and unknown fields are
// rejected naming the field; valid Kestra-style definitions (io.kestra names) are accepted.
import { describe, expect, it } from 'vitest';
import { FlowValidationError, type ValidationIssue } from './errors.js';
import { parseFlow } from './flow.js';

const flow = (trigger: string) =>
  `id: f\nnamespace: company.team\ntasks:\n  - { id: l, type: ai.service.plugin.core.log.Log, message: hi }\ntriggers:\n  - ${trigger}\n`;

function issuesOf(source: string): ValidationIssue[] {
  try { parseFlow(source); } catch (err) { if (err instanceof FlowValidationError) return err.errors; throw err; }
  throw new Error('flow was accepted');
}

describe('invalid plugin triggers are rejected with the field named', () => {
  it.each([
    ['HTTP without uri', '{ id: t, type: io.kestra.plugin.core.http.Trigger }', 'triggers[0].uri', 'required'],
    ['HTTP bad method', '{ id: t, type: io.kestra.plugin.core.http.Trigger, uri: "http://x", method: FETCH }', 'triggers[0].method', 'not one of'],
    ['HTTP bad interval', '{ id: t, type: io.kestra.plugin.core.http.Trigger, uri: "http://x", interval: 5m }', 'triggers[0].interval', 'ISO 8601 duration'],
    ['JDBC without sql', '{ id: t, type: io.kestra.plugin.jdbc.postgresql.Trigger, url: "jdbc:postgresql://h/db" }', 'triggers[0].sql', 'required'],
    ['JDBC bad fetchType', '{ id: t, type: io.kestra.plugin.jdbc.postgresql.Trigger, url: u, sql: s, fetchType: ALL }', 'triggers[0].fetchType', 'not one of'],
    ['MinIO without bucket', '{ id: t, type: io.kestra.plugin.minio.Trigger, action: NONE }', 'triggers[0].bucket', 'required'],
    ['MinIO MOVE without moveTo', '{ id: t, type: io.kestra.plugin.minio.Trigger, bucket: b, action: MOVE }', 'triggers[0].moveTo', 'required'],
    ['Redis without key', '{ id: t, type: io.kestra.plugin.redis.list.RealtimeTrigger, url: "redis://h" }', 'triggers[0].key', 'required'],
    ['Redis bad serdeType', '{ id: t, type: io.kestra.plugin.redis.list.RealtimeTrigger, url: u, key: k, serdeType: XML }', 'triggers[0].serdeType', 'not one of'],
    ['MQTT bad qos', '{ id: t, type: io.kestra.plugin.mqtt.RealtimeTrigger, server: "tcp://h:1883", topic: a, qos: 3 }', 'triggers[0].qos', ''],
    ['NATS without subject', '{ id: t, type: io.kestra.plugin.nats.RealtimeTrigger, url: "nats://h" }', 'triggers[0].subject', 'required'],
    ['CDC without database', '{ id: t, type: io.kestra.plugin.debezium.postgres.RealtimeTrigger, hostname: h }', 'triggers[0].database', 'required'],
    ['CDC bad slot name', '{ id: t, type: io.kestra.plugin.debezium.postgres.RealtimeTrigger, hostname: h, database: d, slotName: "Bad-Slot" }', 'triggers[0].slotName', ''],
    ['HTTP encryptBody', '{ id: t, type: io.kestra.plugin.core.http.Trigger, uri: "http://x", encryptBody: true }', 'triggers[0].encryptBody', 'not supported'],
    ['MQTT authMethod', '{ id: t, type: io.kestra.plugin.mqtt.RealtimeTrigger, server: "tcp://h:1883", topic: a, authMethod: SCRAM-SHA-1 }', 'triggers[0].authMethod', 'not supported'],
    ['unknown property', '{ id: t, type: io.kestra.plugin.redis.list.RealtimeTrigger, url: u, key: k, topic: x }', 'triggers[0].topic', 'unknown property'],
  ])('%s', (_name, trigger, path, reason) => {
    const issues = issuesOf(flow(trigger));
    const hit = issues.find((i) => i.path === path);
    expect(hit, JSON.stringify(issues)).toBeDefined();
    expect(hit!.message).toContain(reason);
  });
});

it('accepts Kestra-style definitions of every plugin trigger', () => {
  const triggers = [
    '{ id: a, type: io.kestra.plugin.core.http.Trigger, uri: "https://api/x", responseCondition: "{{ response.statusCode == 200 }}", interval: PT30S }',
    '{ id: b, type: io.kestra.plugin.jdbc.postgresql.Trigger, url: "jdbc:postgresql://h:5432/db", username: u, password: "{{ secret(\'PG\') }}", sql: "select 1", fetchType: FETCH, interval: PT5M }',
    '{ id: c, type: io.kestra.plugin.minio.Trigger, endpoint: "https://s3", accessKeyId: k, secretKeyId: s, region: eu, bucket: b, prefix: p/, action: MOVE, moveTo: { key: archive } }',
    '{ id: d, type: io.kestra.plugin.redis.list.RealtimeTrigger, url: "redis://h:6379/0", key: q, serdeType: JSON }',
    '{ id: e, type: io.kestra.plugin.mqtt.RealtimeTrigger, server: "tcp://h:1883", clientId: kestra, topic: [a/b, c/#], qos: 1, serdeType: JSON }',
    '{ id: g, type: io.kestra.plugin.nats.core.RealtimeTrigger, url: "nats://h:4222", subject: s, durableId: d, deliverPolicy: All }',
    '{ id: h, type: io.kestra.plugin.debezium.postgres.RealtimeTrigger, hostname: h, port: "5432", username: u, password: p, database: d, includedTables: public.orders }',
  ];
  const f = parseFlow(`id: f\nnamespace: company.team\ntasks:\n  - { id: l, type: ai.service.plugin.core.log.Log, message: hi }\ntriggers:\n${triggers.map((t) => `  - ${t}\n`).join('')}`);
  expect(f.triggers!.map((t) => t.type)).toEqual([
    'ai.service.plugin.core.http.Trigger', 'ai.service.plugin.jdbc.postgresql.Trigger', 'ai.service.plugin.minio.Trigger',
    'ai.service.plugin.redis.list.RealtimeTrigger', 'ai.service.plugin.mqtt.RealtimeTrigger', 'ai.service.plugin.nats.core.RealtimeTrigger',
    'ai.service.plugin.debezium.postgres.RealtimeTrigger',
  ]);
});
