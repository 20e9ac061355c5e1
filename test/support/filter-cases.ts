// Search-filter cases every store must answer alike (SQLite, the cluster caches, PostgreSQL): a handful of executions,
// flows and log lines, and a table of (filters, expected ids). The stores' own test files run them.
import { expect, it } from 'vitest';
import type { Execution, Flow, LogLine } from '../../operator/core/types.js';
import type { SearchFilter, TextField, TextOp } from '../../operator/store/filters.js';
import { logLine, sampleExecution } from '../../operator/store/sqlite/test-fixtures.js';

const day = (d: number) => `2026-05-0${d}T10:00:00.000Z`;

/** e1..e5: namespaces company.team / company.team.sub / companyx / system, states, days 1..5, labels, one child. */
export function filterExecutions(): Execution[] {
  const e = (id: string, o: Parameters<typeof sampleExecution>[1], parent?: string): Execution => {
    const x = sampleExecution(id, o);
    if (parent) x.parent = { executionId: parent, taskRunId: 'tr', namespace: 'company.team', flowId: 'hello' };
    return x;
  };
  return [
    e('e1', { namespace: 'company.team', flowId: 'hello', state: 'SUCCESS', startDate: day(1), labels: [{ key: 'env', value: 'prod' }, { key: 'team', value: 'data' }] }),
    e('e2', { namespace: 'company.team.sub', flowId: 'hello-world', state: 'FAILED', startDate: day(2), labels: [{ key: 'env', value: 'dev' }] }),
    e('e3', { namespace: 'companyx', flowId: 'other', state: 'RUNNING', startDate: day(3), labels: [{ key: 'env', value: 'production' }] }),
    e('e4', { namespace: 'system', flowId: 'purge', state: 'SUCCESS', startDate: day(4) }),
    e('e5', { namespace: 'company.team', flowId: 'hello', state: 'KILLED', startDate: day(5), labels: [{ key: 'team', value: 'data' }] }, 'e1'),
  ];
}

const text = (field: TextField, op: TextOp, ...values: string[]): SearchFilter =>
  ({ kind: 'text', field, op, values });

/** [name, filters, ids expected (newest first)] */
export const EXECUTION_FILTER_CASES: [string, SearchFilter[], string[]][] = [
  ['namespace EQUALS is exact', [text('namespace', 'EQUALS', 'company.team')], ['e5', 'e1']],
  ['namespace NOT_EQUALS', [text('namespace', 'NOT_EQUALS', 'company.team')], ['e4', 'e3', 'e2']],
  ['namespace PREFIX takes children on dotted segments', [text('namespace', 'PREFIX', 'company.team')], ['e5', 'e2', 'e1']],
  ['namespace STARTS_WITH is textual', [text('namespace', 'STARTS_WITH', 'company')], ['e5', 'e3', 'e2', 'e1']],
  ['namespace ENDS_WITH', [text('namespace', 'ENDS_WITH', '.sub')], ['e2']],
  ['namespace CONTAINS is case-sensitive', [text('namespace', 'CONTAINS', 'TEAM')], []],
  ['namespace CONTAINS', [text('namespace', 'CONTAINS', 'team')], ['e5', 'e2', 'e1']],
  ['namespace IN', [text('namespace', 'IN', 'companyx', 'system')], ['e4', 'e3']],
  ['namespace NOT_IN', [text('namespace', 'NOT_IN', 'companyx', 'system')], ['e5', 'e2', 'e1']],
  ['namespace REGEX finds anywhere', [text('namespace', 'REGEX', 'y[x]')], ['e3']],
  ['namespace REGEX anchored', [text('namespace', 'REGEX', '^company\\.team$')], ['e5', 'e1']],
  ['flowId STARTS_WITH', [text('flowId', 'STARTS_WITH', 'hello')], ['e5', 'e2', 'e1']],
  ['flowId ENDS_WITH', [text('flowId', 'ENDS_WITH', 'world')], ['e2']],
  ['state IN', [text('state', 'IN', 'SUCCESS', 'KILLED')], ['e5', 'e4', 'e1']],
  ['state NOT_IN', [text('state', 'NOT_IN', 'SUCCESS', 'KILLED')], ['e3', 'e2']],
  ['startDate GREATER_THAN', [{ kind: 'date', field: 'startDate', op: 'GREATER_THAN', value: day(3) }], ['e5', 'e4']],
  ['startDate GREATER_THAN_OR_EQUAL_TO', [{ kind: 'date', field: 'startDate', op: 'GREATER_THAN_OR_EQUAL_TO', value: day(3) }], ['e5', 'e4', 'e3']],
  ['endDate LESS_THAN compares the start date', [{ kind: 'date', field: 'endDate', op: 'LESS_THAN', value: day(2) }], ['e1']],
  ['date EQUALS', [{ kind: 'date', field: 'startDate', op: 'EQUALS', value: day(2) }], ['e2']],
  ['date range', [{ kind: 'date', field: 'startDate', op: 'GREATER_THAN_OR_EQUAL_TO', value: day(2) }, { kind: 'date', field: 'endDate', op: 'LESS_THAN_OR_EQUAL_TO', value: day(4) }], ['e4', 'e3', 'e2']],
  ['labels EQUALS: every pair', [{ kind: 'labels', op: 'EQUALS', labels: [{ key: 'env', value: 'prod' }, { key: 'team', value: 'data' }] }], ['e1']],
  ['labels IN: any pair', [{ kind: 'labels', op: 'IN', labels: [{ key: 'env', value: 'dev' }, { key: 'team', value: 'data' }] }], ['e5', 'e2', 'e1']],
  ['labels NOT_EQUALS: none of the pairs', [{ kind: 'labels', op: 'NOT_EQUALS', labels: [{ key: 'env', value: 'prod' }] }], ['e5', 'e4', 'e3', 'e2']],
  ['labels NOT_IN', [{ kind: 'labels', op: 'NOT_IN', labels: [{ key: 'env', value: 'prod' }, { key: 'env', value: 'dev' }] }], ['e5', 'e4', 'e3']],
  ['labels CONTAINS a value of a key', [{ kind: 'labels', op: 'CONTAINS', labels: [{ key: 'env', value: 'prod' }] }], ['e3', 'e1']],
  ['labels CONTAINS any key or value', [{ kind: 'labels', op: 'CONTAINS', labels: [{ key: '', value: 'tea' }] }], ['e5', 'e1']],
  ['q: id, namespace, flow id or label, any case', [{ kind: 'q', op: 'EQUALS', value: 'WORLD' }], ['e2']],
  ['q on a label', [{ kind: 'q', op: 'EQUALS', value: 'env:dev' }], ['e2']],
  ['q NOT_EQUALS', [{ kind: 'q', op: 'NOT_EQUALS', value: 'hello' }], ['e4', 'e3']],
  ['triggerExecutionId EQUALS', [text('triggerExecutionId', 'EQUALS', 'e1')], ['e5']],
  ['childFilter CHILD', [{ kind: 'present', field: 'triggerExecutionId', present: true }], ['e5']],
  ['childFilter MAIN', [{ kind: 'present', field: 'triggerExecutionId', present: false }], ['e4', 'e3', 'e2', 'e1']],
  ['kind NORMAL (every execution here)', [text('kind', 'IN', 'NORMAL')], ['e5', 'e4', 'e3', 'e2', 'e1']],
  ['kind TEST', [text('kind', 'IN', 'TEST')], []],
  ['several filters hold together', [text('namespace', 'PREFIX', 'company'), text('state', 'NOT_IN', 'KILLED'), { kind: 'labels', op: 'IN', labels: [{ key: 'team', value: 'data' }, { key: 'env', value: 'dev' }] }], ['e2', 'e1']],
];

/** The cases as vitest tests over a search function (ids of the page, newest first). */
export function executionFilterCases(search: (filters: SearchFilter[]) => Promise<{ ids: string[]; total: number }>): void {
  it.each(EXECUTION_FILTER_CASES)('%s', async (_name, filters, ids) => {
    const page = await search(filters);
    expect(page.ids).toEqual(ids);
    expect(page.total).toBe(ids.length);
  });
}

/** Flows f1..f4 (labels as a map on f1, as a list on f2). */
export function filterFlows(): { flow: Flow; source: string }[] {
  const make = (namespace: string, id: string, labels: string, description?: string) => {
    const source = `id: ${id}\nnamespace: ${namespace}\n${description ? `description: ${description}\n` : ''}${labels}tasks:\n  - id: log\n    type: io.kestra.plugin.core.log.Log\n    message: hi\n`;
    const flow: Flow = { id, namespace, ...(description ? { description } : {}), tasks: [{ id: 'log', type: 'ai.service.plugin.core.log.Log', message: 'hi' }] };
    if (labels.includes('env: prod')) flow.labels = { env: 'prod', team: 'data' };
    if (labels.includes('value: dev')) flow.labels = [{ key: 'env', value: 'dev' }];
    return { flow, source };
  };
  return [
    make('company.team', 'f1', 'labels:\n  env: prod\n  team: data\n'),
    make('company.team.sub', 'f2', 'labels:\n  - key: env\n    value: dev\n', 'Nightly Report'),
    make('companyx', 'f3', ''),
    make('system', 'f4', ''),
  ];
}

/** [name, filters, flow ids expected (by namespace, then id)] */
export const FLOW_FILTER_CASES: [string, SearchFilter[], string[]][] = [
  ['namespace PREFIX', [text('namespace', 'PREFIX', 'company.team')], ['f1', 'f2']],
  ['flowId IN', [text('flowId', 'IN', 'f1', 'f3')], ['f1', 'f3']],
  ['flowId REGEX', [text('flowId', 'REGEX', '^f[34]$')], ['f3', 'f4']],
  ['labels EQUALS (a map label)', [{ kind: 'labels', op: 'EQUALS', labels: [{ key: 'team', value: 'data' }] }], ['f1']],
  ['labels EQUALS (a list label)', [{ kind: 'labels', op: 'EQUALS', labels: [{ key: 'env', value: 'dev' }] }], ['f2']],
  ['labels NOT_IN', [{ kind: 'labels', op: 'NOT_IN', labels: [{ key: 'env', value: 'dev' }, { key: 'env', value: 'prod' }] }], ['f3', 'f4']],
  ['labels CONTAINS', [{ kind: 'labels', op: 'CONTAINS', labels: [{ key: '', value: 'de' }] }], ['f2']],
  ['q in the description, any case', [{ kind: 'q', op: 'EQUALS', value: 'nightly' }], ['f2']],
  ['scope USER (namespace not system)', [text('namespace', 'NOT_EQUALS', 'system')], ['f1', 'f2', 'f3']],
];

export function flowFilterCases(search: (filters: SearchFilter[]) => Promise<{ ids: string[]; total: number }>): void {
  it.each(FLOW_FILTER_CASES)('%s', async (_name, filters, ids) => {
    const page = await search(filters);
    expect(page.ids).toEqual(ids);
    expect(page.total).toBe(ids.length);
  });
}

/** Log lines l1..l5 (message = id) over two executions, namespaces and levels. */
export function filterLogLines(): LogLine[] {
  return [
    logLine('x1', 'l1 alpha', 'DEBUG', day(1)),
    logLine('x1', 'l2 beta', 'INFO', day(2)),
    logLine('x1', 'l3 alpha beta', 'WARN', day(3), { namespace: 'company.team.sub', flowId: 'nightly' }),
    logLine('x2', 'l4 gamma', 'ERROR', day(4), { namespace: 'companyx', flowId: 'other' }),
    logLine('x2', 'l5 alpha', 'INFO', day(5), { namespace: 'system', flowId: 'purge' }),
  ];
}

/** [name, filters, first words of the messages expected (newest first)] */
export const LOG_FILTER_CASES: [string, SearchFilter[], string[]][] = [
  ['executionId EQUALS', [{ kind: 'text', field: 'executionId', op: 'EQUALS', values: ['x2'] }], ['l5', 'l4']],
  ['executionId STARTS_WITH', [{ kind: 'text', field: 'executionId', op: 'STARTS_WITH', values: ['x'] }], ['l5', 'l4', 'l3', 'l2', 'l1']],
  ['namespace PREFIX', [text('namespace', 'PREFIX', 'company.team')], ['l3', 'l2', 'l1']],
  ['flowId NOT_IN', [text('flowId', 'NOT_IN', 'hello', 'purge')], ['l4', 'l3']],
  ['level EQUALS is a minimum', [{ kind: 'level', op: 'EQUALS', value: 3 }], ['l4', 'l3']],
  ['level NOT_EQUALS: below the minimum', [{ kind: 'level', op: 'NOT_EQUALS', value: 2 }], ['l1']],
  ['q full text', [{ kind: 'q', op: 'EQUALS', value: 'alpha' }], ['l5', 'l3', 'l1']],
  ['q NOT_EQUALS', [{ kind: 'q', op: 'EQUALS', value: 'beta' }, { kind: 'q', op: 'NOT_EQUALS', value: 'alpha' }], ['l2']],
  ['timestamp between dates', [{ kind: 'date', field: 'startDate', op: 'GREATER_THAN', value: day(1) }, { kind: 'date', field: 'endDate', op: 'LESS_THAN', value: day(4) }], ['l3', 'l2']],
  ['triggerId: log lines of triggers do not exist here', [{ kind: 'text', field: 'triggerId', op: 'EQUALS', values: ['t'] }], []],
  ['triggerId NOT_EQUALS holds for every line', [{ kind: 'text', field: 'triggerId', op: 'NOT_EQUALS', values: ['t'] }], ['l5', 'l4', 'l3', 'l2', 'l1']],
];

export function logFilterCases(search: (filters: SearchFilter[]) => Promise<{ messages: string[]; total: number }>): void {
  it.each(LOG_FILTER_CASES)('%s', async (_name, filters, words) => {
    const page = await search(filters);
    expect(page.messages.map((m) => m.split(' ')[0])).toEqual(words);
    expect(page.total).toBe(words.length);
  });
}
