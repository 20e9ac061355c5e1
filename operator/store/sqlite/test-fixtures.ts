// Test fixtures for the store tests: temporary data directories, sample executions, flows and log lines, and the paged
// reads every LogStore must answer alike (SQLite and PostgreSQL run the same cases).
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect, it } from 'vitest';
import type { Execution, ExecutionState, Flow, Label, LogLevel, LogLine } from '../../core/types.js';
import type { LogStore } from '../types.js';

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

/** The paged reads of the LogStore contract (limit/offset with counts and filters, keyset pages), for any store. */
export function logStorePagingCases(store: () => LogStore): void {
    it('reads one execution a page at a time (limit, offset) with its count, filtered by task, task run, attempt and level', async () => {
      const logs = store();
      logs.append(pagingLogLines());
      const messages = (lines: LogLine[]) => lines.map((l) => l.message);
      expect(await logs.countForExecution('paged')).toBe(26);
      expect(messages(await logs.forExecution('paged', { limit: 10 }))).toEqual(PAGED_MESSAGES.slice(0, 10));
      expect(messages(await logs.forExecution('paged', { limit: 10, offset: 20 }))).toEqual(PAGED_MESSAGES.slice(20));
      expect(await logs.forExecution('paged', { limit: 10, offset: 26 })).toEqual([]);
      const t1 = { taskId: 't1' };
      expect(messages(await logs.forExecution('paged', t1))).toEqual(['line 01', 'line 04', 'line 07', 'line 10', 'line 13', 'line 16', 'line 19', 'line 22']);
      expect(await logs.countForExecution('paged', t1)).toBe(8);
      expect(messages(await logs.forExecution('paged', { ...t1, attempt: 0, limit: 2, offset: 1 }))).toEqual(['line 10', 'line 16']);
      expect(await logs.countForExecution('paged', { taskRunId: 'tr2', attempt: 1 })).toBe(4);
      expect(messages(await logs.forExecution('paged', { minLevel: 'WARN' }))).toEqual(['line 00', 'line 05', 'line 10', 'line 15', 'line 20']);
      expect(await logs.countForExecution('unknown')).toBe(0);
      expect(await logs.forExecution('unknown', { limit: 10 })).toEqual([]);
    });

    it('reads every line of one execution in keyset pages, in time order, ties and filters included', async () => {
      const logs = store();
      logs.append(pagingLogLines());
      const pages: LogLine[][] = [];
      for await (const page of logs.pagesForExecution('paged', {}, 7)) pages.push(page);
      expect(pages.map((p) => p.length)).toEqual([7, 7, 7, 5]);
      expect(pages.flat()).toEqual(await logs.forExecution('paged'));
      expect(pages.flat().map((l) => l.message)).toEqual(PAGED_MESSAGES);
      const warn: LogLine[] = [];
      for await (const page of logs.pagesForExecution('paged', { minLevel: 'WARN', taskId: 't2' }, 1)) warn.push(...page);
      expect(warn.map((l) => l.message)).toEqual(['line 05', 'line 20']);
      for await (const page of logs.pagesForExecution('unknown')) expect.unreachable(`no page for an unknown execution: ${page.length}`);
    });

    it('follows one execution in storage order with a cursor: a late line with an earlier time is still delivered', async () => {
      const logs = store();
      logs.append([logLine('follow', 'a', 'INFO', '2026-05-01T00:00:02.000Z'), logLine('follow', 'b', 'DEBUG', '2026-05-01T00:00:03.000Z')]);
      logs.append([logLine('other', 'x')]);
      const first = await logs.linesAfter('follow', '', {}, 1);
      expect(first.lines.map((l) => l.message)).toEqual(['a']);
      const second = await logs.linesAfter('follow', first.cursor, {}, 10);
      expect(second.lines.map((l) => l.message)).toEqual(['b']);
      expect(await logs.linesAfter('follow', second.cursor)).toEqual({ lines: [], cursor: second.cursor });
      logs.append([logLine('follow', 'late', 'WARN', '2026-05-01T00:00:01.000Z')]);
      const third = await logs.linesAfter('follow', second.cursor);
      expect(third.lines).toEqual([logLine('follow', 'late', 'WARN', '2026-05-01T00:00:01.000Z')]);
      expect((await logs.linesAfter('follow', '', { minLevel: 'INFO' })).lines.map((l) => l.message)).toEqual(['a', 'late']);
      expect(await logs.linesAfter('unknown', '')).toEqual({ lines: [], cursor: '' });
      await expect(logs.linesAfter('follow', 'not a cursor')).rejects.toThrow(/invalid log cursor/);
    });
}
