// How commands print results: `--output table` (aligned columns for lists, `key: value` lines for one object, the
// default), `json` or `yaml` (the API's answer as it came, for scripts).
import { createRequire } from 'node:module';
import { usageError } from './errors.js';

export const OutputFormats = ['table', 'json', 'yaml'] as const;
export type OutputFormat = (typeof OutputFormats)[number];

export function outputFormat(value: string | undefined): OutputFormat {
  const v = (value ?? 'table').toLowerCase();
  if (!(OutputFormats as readonly string[]).includes(v)) throw usageError(`invalid --output '${value}': expected one of ${OutputFormats.join(', ')}`);
  return v as OutputFormat;
}

const require = createRequire(import.meta.url);
let yaml: typeof import('yaml') | undefined;

/** `value` as YAML text (no line folding). The yaml library loads on first use: most commands never print YAML. */
export function yamlText(value: unknown): string {
  yaml ??= require('yaml') as typeof import('yaml');
  return yaml.stringify(value, { lineWidth: 0 }).trimEnd();
}

export interface Column<T> { header: string; value: (row: T) => unknown }

const cell = (v: unknown): string => {
  if (v === undefined || v === null) return '';
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v).replace(/\s+/g, ' ');
};

/** Aligned columns with a header line. */
export function table<T>(rows: T[], columns: Column<T>[]): string {
  const cells = rows.map((r) => columns.map((c) => cell(c.value(r))));
  const widths = columns.map((c, i) => Math.max(c.header.length, ...cells.map((row) => row[i]!.length)));
  const line = (parts: string[]): string => parts.map((p, i) => (i === parts.length - 1 ? p : p.padEnd(widths[i]!))).join('  ').trimEnd();
  return [line(columns.map((c) => c.header)), ...cells.map(line)].join('\n');
}

/** `value` as JSON or YAML; in table form the `table` text (or `key: value` lines when none is given). */
export function render(format: OutputFormat, value: unknown, tableText?: () => string): string {
  if (format === 'json') return JSON.stringify(value, null, 2);
  if (format === 'yaml') return yamlText(value);
  if (tableText) return tableText();
  if (typeof value !== 'object' || value === null) return cell(value);
  return Object.entries(value).map(([k, v]) => `${k}: ${cell(v)}`).join('\n');
}
