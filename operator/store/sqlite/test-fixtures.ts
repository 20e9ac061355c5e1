// Test fixtures for the SQLite store tests: temporary data directories and sample executions, flows and log lines.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Execution, ExecutionState, Flow, Label, LogLevel, LogLine } from '../../core/types.js';

/** A fresh directory under the OS temp dir, and its removal. */
export function tempDir(prefix = 'store-test-'): { dir: string; remove(): void } {
  const dir = mkdtempSync(path.join(os.tmpdir(), prefix));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

export function sampleExecution(id: string, opts: {
  namespace?: string; flowId?: string; state?: ExecutionState; startDate?: string; labels?: Label[]; padding?: number;
} = {}): Execution {
  const startDate = opts.startDate ?? new Date().toISOString();
  return {
    id,
    namespace: opts.namespace ?? 'company.team',
    flowId: opts.flowId ?? 'hello',
    flowRevision: 1,
    state: { current: opts.state ?? 'CREATED', histories: [{ state: opts.state ?? 'CREATED', date: startDate }], startDate },
    originalId: id,
    labels: opts.labels ?? [],
    inputs: opts.padding ? { padding: 'x'.repeat(opts.padding) } : {},
    taskRunList: [],
  };
}

export function sampleFlow(namespace: string, id: string, description?: string): Flow {
  return { id, namespace, description, tasks: [{ id: 'log', type: 'ai.service.plugin.core.log.Log', message: 'hi' }] };
}

export function flowSource(flow: Flow, extra = ''): string {
  return `id: ${flow.id}\nnamespace: ${flow.namespace}\ntasks:\n  - id: log\n    type: ai.service.plugin.core.log.Log\n    message: hi${extra}\n`;
}

export function logLine(executionId: string, message: string, level: LogLevel = 'INFO', timestamp?: string, extra: Partial<LogLine> = {}): LogLine {
  return {
    executionId, namespace: 'company.team', flowId: 'hello', taskId: 't1', taskRunId: `${executionId}-tr`,
    attemptNumber: 1, level, timestamp: timestamp ?? new Date().toISOString(), message, ...extra,
  };
}

/**
 * Lines of execution `paged` for the paging tests of both log stores: 25 lines `line 00`..`line 24`, three to a second
 * (ties broken by insertion order), tasks t0..t2 (task runs tr0..tr2) by i % 3, attempts by i % 2, WARN when i % 5 is 0;
 * then `earliest` (task setup), appended last but a day older; and one line of another execution.
 */
export function pagingLogLines(): LogLine[] {
  const lines = Array.from({ length: 25 }, (_, i) => logLine('paged', `line ${String(i).padStart(2, '0')}`, i % 5 === 0 ? 'WARN' : 'INFO',
    `2026-05-01T00:00:${String(Math.floor(i / 3)).padStart(2, '0')}.000Z`, { taskId: `t${i % 3}`, taskRunId: `tr${i % 3}`, attemptNumber: i % 2 }));
  return [...lines, logLine('paged', 'earliest', 'INFO', '2026-04-30T00:00:00.000Z', { taskId: 'setup', taskRunId: 'tr-setup', attemptNumber: 0 }), logLine('other', 'line 00', 'INFO')];
}

/** Messages of the `paged` lines in time order. */
export const PAGED_MESSAGES = ['earliest', ...Array.from({ length: 25 }, (_, i) => `line ${String(i).padStart(2, '0')}`)];
