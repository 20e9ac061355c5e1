// Registry of the plugin trigger sources by canonical type (and the aliases their declarations give). Open for more: a
// new source adds its plugin to SOURCES and its declaration (defineTrigger) to operator/model/schema-triggers.ts.
import { TRIGGER_DEFINITIONS } from '../../model/schema-triggers.js';
import type { TriggerPlugin } from '../types.js';
import { amqpTrigger } from './amqp.js';
import { httpTrigger } from './http.js';
import { minioTrigger } from './minio.js';
import { mqttTrigger } from './mqtt.js';
import { natsTrigger } from './nats.js';
import { postgresCdcTrigger } from './postgres-cdc.js';
import { postgresQueryTrigger } from './postgres-query.js';
import { redisListTrigger } from './redis-list.js';

const SOURCES: TriggerPlugin[] = [httpTrigger, postgresQueryTrigger, minioTrigger, redisListTrigger, mqttTrigger, natsTrigger, postgresCdcTrigger, amqpTrigger];

/** Type aliases accepted for a source (Kestra moved some plugins between packages), from the declarations. */
const ALIASES: Record<string, string> = Object.fromEntries(TRIGGER_DEFINITIONS.flatMap((d) => d.aliases.map((a) => [a, d.type])));

export const PLUGIN_TRIGGERS: ReadonlyMap<string, TriggerPlugin> = new Map([
  ...SOURCES.map((p) => [p.type, p] as const),
  ...Object.entries(ALIASES).flatMap(([alias, type]) => {
    const p = SOURCES.find((s) => s.type === type);
    return p ? [[alias, p] as const] : [];
  }),
]);

/** A registry with extra sources (tests, or a source added by another module). */
export function withSources(...extra: TriggerPlugin[]): ReadonlyMap<string, TriggerPlugin> {
  return new Map([...PLUGIN_TRIGGERS, ...extra.map((p) => [p.type, p] as const)]);
}
