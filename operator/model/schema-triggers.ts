// Property schemas (JSON Schema draft-07) of the plugin triggers: polling (HTTP, PostgreSQL query, S3/MinIO objects)
// and realtime (Redis list, MQTT, NATS, PostgreSQL row changes, AMQP). Schemas only: the model stays pure, the sources in
// operator/triggers/sources implement them. schema-flow.ts adds the properties every trigger shares.
import { BOOL, DURATION, LABELS, OBJECT, STRING, TPL_BOOL, tplInt, type Schema } from './schema-common.js';
import { PREFIX } from './task-types.js';

/** Canonical type names of the plugin triggers (Kestra's `io.kestra.plugin.` names map onto them). */
export const PLUGIN_TRIGGER_TYPES = {
  http: `${PREFIX}core.http.Trigger`,
  postgresQuery: `${PREFIX}jdbc.postgresql.Trigger`,
  minio: `${PREFIX}minio.Trigger`,
  redisList: `${PREFIX}redis.list.RealtimeTrigger`,
  mqtt: `${PREFIX}mqtt.RealtimeTrigger`,
  nats: `${PREFIX}nats.RealtimeTrigger`,
  natsCore: `${PREFIX}nats.core.RealtimeTrigger`,
  postgresCdc: `${PREFIX}debezium.postgres.RealtimeTrigger`,
  amqp: `${PREFIX}amqp.RealtimeTrigger`,
} as const;

export interface PluginTriggerSchema { properties: Record<string, Schema>; required: string[]; allOf?: Schema[] }

const enumOf = (...values: string[]): Schema => ({ type: 'string', enum: values });
const STRING_OR_LIST: Schema = { type: ['string', 'array'], items: STRING };
const REQUIRED_STRING: Schema = { type: 'string', minLength: 1 };

/** Properties every plugin trigger accepts on top of the common ones (id, type, conditions, stopAfter...). */
const PLUGIN_COMMON: Record<string, Schema> = { inputs: OBJECT, labels: LABELS, allowConcurrent: BOOL };
const POLLING: Record<string, Schema> = { ...PLUGIN_COMMON, interval: DURATION };

const http: PluginTriggerSchema = {
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
};

const postgresQuery: PluginTriggerSchema = {
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
};

const minio: PluginTriggerSchema = {
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
};

const redisList: PluginTriggerSchema = {
  required: ['url', 'key'],
  properties: { ...PLUGIN_COMMON, url: REQUIRED_STRING, key: REQUIRED_STRING, serdeType: enumOf('STRING', 'JSON') },
};

const mqtt: PluginTriggerSchema = {
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
};

const nats: PluginTriggerSchema = {
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
};

// Debezium-style properties: only values the logical-replication implementation honours are accepted (pgoutput, one
// inline row per event, no metadata fields, no DDL events); a value it would ignore is rejected naming the field.
const postgresCdc: PluginTriggerSchema = {
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
};

const amqp: PluginTriggerSchema = {
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
};

/** Schema of each plugin trigger's own properties, by canonical type. */
export const PLUGIN_TRIGGER_SCHEMAS: Record<string, PluginTriggerSchema> = {
  [PLUGIN_TRIGGER_TYPES.http]: http,
  [PLUGIN_TRIGGER_TYPES.postgresQuery]: postgresQuery,
  [PLUGIN_TRIGGER_TYPES.minio]: minio,
  [PLUGIN_TRIGGER_TYPES.redisList]: redisList,
  [PLUGIN_TRIGGER_TYPES.mqtt]: mqtt,
  [PLUGIN_TRIGGER_TYPES.nats]: nats,
  [PLUGIN_TRIGGER_TYPES.natsCore]: nats,
  [PLUGIN_TRIGGER_TYPES.postgresCdc]: postgresCdc,
  [PLUGIN_TRIGGER_TYPES.amqp]: amqp,
};

/** The JSON Schema object of one plugin trigger's properties (what a source declares as its `schema`). */
export function pluginTriggerSchema(type: string): Schema {
  const s = PLUGIN_TRIGGER_SCHEMAS[type];
  if (!s) throw new Error(`no schema for trigger type ${type}`);
  return { type: 'object', required: s.required, properties: s.properties, ...(s.allOf ? { allOf: s.allOf } : {}) };
}
