// The plugin trigger types, each declared once with defineTrigger (name, aliases, docs, JSON schema of its own
// properties): polling (HTTP, PostgreSQL query, S3/MinIO objects) and realtime (Redis list, MQTT, NATS, PostgreSQL row
// changes, AMQP). Declarations only: the model stays pure, the sources in operator/triggers/sources run them by type.
// schema-flow.ts adds the properties every trigger shares.
import { BOOL, DURATION, LABELS, OBJECT, STRING, TPL_BOOL, tplInt, type Schema } from './schema-common.js';
import { defineTrigger, type TriggerDefinition } from '../plugins/define.js';

const enumOf = (...values: string[]): Schema => ({ type: 'string', enum: values });
const STRING_OR_LIST: Schema = { type: ['string', 'array'], items: STRING };
const REQUIRED_STRING: Schema = { type: 'string', minLength: 1 };

/** Properties every plugin trigger accepts on top of the common ones (id, type, conditions, stopAfter...). */
const PLUGIN_COMMON: Record<string, Schema> = { inputs: OBJECT, labels: LABELS, allowConcurrent: BOOL };
const POLLING: Record<string, Schema> = { ...PLUGIN_COMMON, interval: DURATION };

const http = defineTrigger({
  type: 'core.http.Trigger',
  title: 'HTTP trigger',
  kind: 'polling',
  description: 'Polls a URL every `interval` and starts an execution when `responseCondition` renders true (default: `{{ response.statusCode < 400 }}`).',
  required: ['uri'],
  properties: {
    ...POLLING,
    uri: REQUIRED_STRING,
    method: enumOf('GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'),
    headers: OBJECT,
    body: STRING,
    contentType: STRING,
    formData: OBJECT,
    responseCondition: STRING,
    encryptBody: BOOL,
    options: OBJECT,
    timeout: DURATION,
  },
});

const postgresQuery = defineTrigger({
  type: 'jdbc.postgresql.Trigger',
  title: 'PostgreSQL query trigger',
  kind: 'polling',
  description: 'Runs a query every `interval` and starts an execution when it returns rows (fetched as `fetchType` says).',
  required: ['url', 'sql'],
  properties: {
    ...POLLING,
    url: REQUIRED_STRING,
    username: STRING,
    password: STRING,
    sql: REQUIRED_STRING,
    fetchType: enumOf('FETCH_ONE', 'FETCH', 'STORE', 'NONE'),
    fetch: BOOL,
    fetchOne: BOOL,
    store: BOOL,
    fetchSize: tplInt(1),
    timeZoneId: STRING,
    parameters: OBJECT,
    ssl: BOOL,
    sslMode: enumOf('DISABLE', 'ALLOW', 'PREFER', 'REQUIRE', 'VERIFY_CA', 'VERIFY_FULL'),
    sslRootCert: STRING,
    sslCert: STRING,
    sslKey: STRING,
    sslKeyPassword: STRING,
  },
});

const minio = defineTrigger({
  type: 'minio.Trigger',
  title: 'S3/MinIO objects trigger',
  kind: 'polling',
  description: 'Lists a bucket every `interval` and starts an execution for the new objects, then moves or deletes them (`action`).',
  required: ['bucket', 'action'],
  properties: {
    ...POLLING,
    endpoint: STRING,
    accessKeyId: STRING,
    secretKeyId: STRING,
    region: STRING,
    bucket: REQUIRED_STRING,
    prefix: STRING,
    delimiter: STRING,
    marker: STRING,
    regexp: STRING,
    maxKeys: tplInt(1),
    filter: enumOf('FILES', 'DIRECTORY', 'BOTH'),
    action: enumOf('MOVE', 'DELETE', 'NONE'),
    moveTo: {
      type: 'object',
      required: ['key'],
      properties: { key: STRING, bucket: STRING },
      additionalProperties: false,
    },
  },
  allOf: [{ if: { properties: { action: { const: 'MOVE' } }, required: ['action'] }, then: { required: ['moveTo'] } }],
});

const redisList = defineTrigger({
  type: 'redis.list.RealtimeTrigger',
  title: 'Redis list trigger',
  kind: 'realtime',
  description: 'One execution per item popped from a Redis list, never lost and never doubled.',
  required: ['url', 'key'],
  properties: { ...PLUGIN_COMMON, url: REQUIRED_STRING, key: REQUIRED_STRING, serdeType: enumOf('STRING', 'JSON') },
});

const mqtt = defineTrigger({
  type: 'mqtt.RealtimeTrigger',
  title: 'MQTT trigger',
  kind: 'realtime',
  description: 'One execution per message of the MQTT topics.',
  required: ['server', 'topic'],
  properties: {
    ...PLUGIN_COMMON,
    server: REQUIRED_STRING,
    topic: STRING_OR_LIST,
    qos: { type: ['integer', 'string'], enum: [0, 1, 2, '0', '1', '2'] },
    clientId: STRING,
    version: enumOf('V3', 'V5', 'V_3_1_1', 'V_5'),
    username: STRING,
    password: STRING,
    serdeType: enumOf('STRING', 'JSON', 'BYTES'),
    connectionTimeout: DURATION,
    crt: STRING,
    httpsHostnameVerificationEnabled: BOOL,
    authMethod: STRING,
  },
});

const nats = defineTrigger({
  type: 'nats.RealtimeTrigger',
  aliases: ['nats.core.RealtimeTrigger'],
  title: 'NATS trigger',
  kind: 'realtime',
  description: 'One execution per message of a NATS JetStream subject (durable consumer).',
  required: ['url', 'subject'],
  properties: {
    ...PLUGIN_COMMON,
    url: REQUIRED_STRING,
    subject: REQUIRED_STRING,
    username: STRING,
    password: STRING,
    token: STRING,
    creds: STRING,
    durableId: STRING,
    deliverPolicy: enumOf('All', 'Last', 'New', 'ByStartSequence', 'ByStartTime', 'LastPerSubject'),
    batchSize: tplInt(1),
  },
});

// Debezium-style properties: only values the logical-replication implementation honours are accepted (pgoutput, one
// inline row per event, no metadata fields, no DDL events); a value it would ignore is rejected naming the field.
const postgresCdc = defineTrigger({
  type: 'debezium.postgres.RealtimeTrigger',
  title: 'PostgreSQL change trigger',
  kind: 'realtime',
  description: 'One execution per row change of PostgreSQL tables (logical replication, pgoutput), with Debezium\'s property names.',
  required: ['hostname', 'database'],
  properties: {
    ...PLUGIN_COMMON,
    hostname: REQUIRED_STRING,
    port: { type: ['integer', 'string'] },
    username: STRING,
    password: STRING,
    database: REQUIRED_STRING,
    slotName: { type: 'string', pattern: '^[a-z0-9_]{1,63}$' },
    publicationName: STRING,
    pluginName: enumOf('PGOUTPUT'),
    tables: STRING_OR_LIST,
    includedTables: STRING_OR_LIST,
    excludedTables: STRING_OR_LIST,
    includedDatabases: STRING_OR_LIST,
    excludedDatabases: STRING_OR_LIST,
    includedColumns: STRING_OR_LIST,
    excludedColumns: STRING_OR_LIST,
    snapshotMode: enumOf('INITIAL', 'ALWAYS', 'NEVER', 'INITIAL_ONLY'),
    format: enumOf('INLINE'),
    deleted: enumOf('ADD_FIELD', 'NULL', 'DROP'),
    deletedFieldName: STRING,
    key: enumOf('ADD_FIELD'),
    metadata: enumOf('DROP'),
    ignoreDdl: { type: 'boolean', enum: [true] },
    splitTable: enumOf('TABLE'),
    stateName: STRING,
    sslMode: enumOf('DISABLE', 'REQUIRE', 'VERIFY_CA', 'VERIFY_FULL'),
    sslRootCert: STRING,
    sslCert: STRING,
    sslKey: STRING,
    sslKeyPassword: STRING,
  },
});

const amqp = defineTrigger({
  type: 'amqp.RealtimeTrigger',
  title: 'AMQP trigger',
  kind: 'realtime',
  description: 'One execution per message of an AMQP (RabbitMQ) queue.',
  required: ['queue'],
  properties: {
    ...PLUGIN_COMMON,
    url: REQUIRED_STRING,
    host: REQUIRED_STRING,
    port: { type: ['integer', 'string'] },
    username: STRING,
    password: STRING,
    virtualHost: STRING,
    queue: REQUIRED_STRING,
    consumerTag: STRING,
    serdeType: enumOf('STRING', 'JSON'),
    autoAck: TPL_BOOL,
  },
  // The broker: `url` (amqp://user:pass@host:port/vhost) or `host` (with port, username, password, virtualHost).
  allOf: [{ anyOf: [{ required: ['url'] }, { required: ['host'] }] }],
});

/** Every plugin trigger type, declared once (defineTrigger): the flow schema, the sources' registry and the docs read it. */
export const TRIGGER_DEFINITIONS: readonly TriggerDefinition[] = [http, postgresQuery, minio, redisList, mqtt, nats, postgresCdc, amqp];

/** Canonical type names of the plugin triggers (Kestra's `io.kestra.plugin.` names map onto them). */
export const PLUGIN_TRIGGER_TYPES = {
  http: http.type,
  postgresQuery: postgresQuery.type,
  minio: minio.type,
  redisList: redisList.type,
  mqtt: mqtt.type,
  nats: nats.type,
  postgresCdc: postgresCdc.type,
  amqp: amqp.type,
} as const;

/** Schema of each plugin trigger's own properties, by canonical type (aliases too). */
export const PLUGIN_TRIGGER_SCHEMAS: Record<string, Schema> = Object.fromEntries(
  TRIGGER_DEFINITIONS.flatMap((d) => [d.type, ...d.aliases].map((t) => [t, d.schema])),
);

/** The JSON Schema object of one plugin trigger's properties (what a source declares as its `schema`). */
export function pluginTriggerSchema(type: string): Schema {
  const s = PLUGIN_TRIGGER_SCHEMAS[type];
  if (!s) throw new Error(`no schema for trigger type ${type}`);
  return s;
}
