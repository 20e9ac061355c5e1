// Kestra's script output protocol: a stdout/stderr line `::{"outputs":{...},"metrics":[...],"logs":[...]}::`
// carries outputs, metrics or log lines instead of plain text. Parsed into prototype-free objects (the script chose
// the keys), so `{"outputs":{"__proto__":...}}` is an ordinary output named `__proto__`.
import { dictFrom, parseJsonSafe } from '../../core/keyed.js';
import type { LogLevel, Metric } from '../../core/types.js';
import { isRecord, toLogLevel } from '../util.js';

export interface ProtocolMessage {
  outputs?: Record<string, unknown>;
  metrics?: Metric[];
  logs?: { level: LogLevel; message: string }[];
}

const LINE = /^\s*::(\{.*\})::\s*$/;

function toMetric(raw: unknown): Metric | undefined {
  if (!isRecord(raw) || typeof raw.name !== 'string') return undefined;
  const type = String(raw.type ?? 'counter').toLowerCase();
  const value = Number(raw.value);
  if ((type !== 'counter' && type !== 'timer') || Number.isNaN(value)) return undefined;
  const metric: Metric = { name: raw.name, type, value };
  if (isRecord(raw.tags)) {
    metric.tags = dictFrom(Object.entries(raw.tags).map(([k, v]) => [k, String(v)] as const));
  }
  return metric;
}

function toLog(raw: unknown): { level: LogLevel; message: string } | undefined {
  if (!isRecord(raw)) return undefined;
  let level: LogLevel = 'INFO';
  try {
    level = toLogLevel(raw.level ?? 'INFO');
  } catch {
    level = 'INFO';
  }
  const message = typeof raw.message === 'string' ? raw.message : JSON.stringify(raw.message);
  return { level, message };
}

/** Parses a protocol line; undefined when the line is ordinary output (or not valid protocol JSON). */
export function parseProtocolLine(line: string): ProtocolMessage | undefined {
  const m = LINE.exec(line);
  if (!m) return undefined;
  let parsed: unknown;
  try {
    parsed = parseJsonSafe(m[1]!);
  } catch {
    return undefined;
  }
  if (!isRecord(parsed)) return undefined;
  const msg: ProtocolMessage = {};
  if (isRecord(parsed.outputs)) msg.outputs = parsed.outputs;
  if (Array.isArray(parsed.metrics)) {
    msg.metrics = parsed.metrics.map(toMetric).filter((x): x is Metric => x !== undefined);
  }
  if (Array.isArray(parsed.logs)) {
    msg.logs = parsed.logs.map(toLog).filter((x): x is { level: LogLevel; message: string } => x !== undefined);
  }
  return msg.outputs || msg.metrics || msg.logs ? msg : undefined;
}
