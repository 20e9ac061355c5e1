// The logs a task attempt may read (core.log.Fetch, the errorLogs() function): lines of executions of its own
// namespace, or of one ALLOWED_NAMESPACES grants to it. A line is returned only when its recorded namespace and flow
// are those asked for, so naming another tenant's execution id under one's own namespace yields nothing.
import type { LogLevel, LogLine } from '../core/types.js';
import type { LogStore } from '../store/types.js';
import { namespaceDenied, type NamespaceGrants } from './namespaces.js';

/** A refusal of the log view: permanent, and a 403 where an HTTP layer shows it. */
export class LogAccessError extends Error {
  readonly status = 403;
  constructor(message: string) { super(message); this.name = 'LogAccessError'; }
}

export interface LogTarget { namespace: string; flowId: string; executionId: string }

export interface ExecutionLogReader {
  /** Lines of one execution at `minLevel` or above (of one task when `taskId` is given), in time order, page by page. */
  pages(target: LogTarget, filter: { minLevel: LogLevel; taskId?: string }): AsyncIterable<LogLine[]>;
}

const PAGE = 500;

export function scopedLogs(logs: LogStore, fromNamespace: string, grants: NamespaceGrants): ExecutionLogReader {
  return {
    async *pages(target, filter) {
      const denied = namespaceDenied(fromNamespace, target.namespace, `The logs of execution '${target.executionId}'`, grants);
      if (denied) throw new LogAccessError(denied);
      await logs.flush();
      const query = { minLevel: filter.minLevel, ...(filter.taskId !== undefined ? { taskId: filter.taskId } : {}) };
      for await (const page of logs.pagesForExecution(target.executionId, query, PAGE)) {
        const mine = page.filter((l) => l.namespace === target.namespace && l.flowId === target.flowId);
        if (mine.length) yield mine;
      }
    },
  };
}
