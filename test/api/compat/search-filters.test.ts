// Kestra's search syntax over HTTP (`filters[field][OPERATION]=value`) on /executions/search, /flows/search,
// /logs/search and /triggers/search: how the query string binds (IN lists, labels by key, legacy parameters beside
// them), and that an unknown field, an unsupported operation or a bad value is a 400 naming the parameter.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { limitsFromEnv } from '../../../operator/core/limits.js';
import { filterExecutions, filterLogLines } from '../../support/filter-cases.js';
import { call, createFlow, startTestApi, type TestApi } from '../helpers.js';

let api: TestApi;
let small: TestApi;
const SCHEDULE = 'io.kestra.plugin.core.trigger.Schedule';

beforeAll(async () => {
  api = await startTestApi();
  small = await startTestApi({ limits: limitsFromEnv({ SEARCH_REGEX_MAX_LENGTH: '10', SEARCH_FILTER_MAX_VALUES: '2' }) });
  for (const e of filterExecutions()) await api.stores.executions.create(e);
  api.stores.logs.append(filterLogLines());
  const flow = (ns: string, id: string, extra = '') => `id: ${id}\nnamespace: ${ns}\n${extra}tasks:\n  - id: log\n    type: io.kestra.plugin.core.log.Log\n    message: hi\n`;
  await createFlow(api, flow('company.team', 'f1', 'labels:\n  env: prod\n'));
  await createFlow(api, flow('company.team.sub', 'f2', 'labels:\n  - key: env\n    value: dev\ndescription: Nightly report\n'));
  await createFlow(api, flow('system', 'f3'));
  await createFlow(api, flow('company.team', 'scheduled', `triggers:\n  - id: daily\n    type: ${SCHEDULE}\n    cron: "0 3 * * *"\n  - id: off\n    type: ${SCHEDULE}\n    cron: "0 4 * * *"\n    disabled: true\n`));
});
afterAll(async () => { await api?.close(); await small?.close(); });

const get = (path: string, on = api) => call(`${on.url}/api/v1${path}`);
const ids = async (path: string): Promise<string[]> => {
  const res = await get(path);
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(res.body.total).toBe(res.body.results.length);
  return res.body.results.map((r: { id: string }) => r.id);
};

describe('GET /executions/search with filters', () => {
  it.each([
    ['filters[namespace][PREFIX]=company.team', ['e5', 'e2', 'e1']],
    ['filters[namespace][EQUALS]=company.team', ['e5', 'e1']],
    ['filters[namespace][IN]=companyx,system', ['e4', 'e3']],
    ['filters[namespace][IN]=[companyx,system]', ['e4', 'e3']],
    ['filters[namespace][IN]=companyx&filters[namespace][IN]=system', ['e4', 'e3']],
    ['filters[namespace][REGEX]=%5Ecompany%5C.team%24', ['e5', 'e1']],
    ['filters[flowId][CONTAINS]=world', ['e2']],
    ['filters[state][EQUALS]=FAILED', ['e2']],
    ['filters[state][IN]=SUCCESS,KILLED', ['e5', 'e4', 'e1']],
    ['filters[state][NOT_IN]=SUCCESS,KILLED', ['e3', 'e2']],
    ['filters[state][not_in]=SUCCESS', ['e5', 'e3', 'e2']],
    ['filters[labels][EQUALS][env]=prod', ['e1']],
    ['filters[labels][EQUALS][env]=prod&filters[labels][EQUALS][team]=data', ['e1']],
    ['filters[labels][IN][env]=dev&filters[labels][IN][team]=data', ['e5', 'e2', 'e1']],
    ['filters[labels][EQUALS]=env:dev', ['e2']],
    ['filters[labels][NOT_EQUALS][env]=prod', ['e5', 'e4', 'e3', 'e2']],
    ['filters[labels][CONTAINS]=prod', ['e3', 'e1']],
    ['filters[startDate][GREATER_THAN_OR_EQUAL_TO]=2026-05-03T10:00:00Z', ['e5', 'e4', 'e3']],
    ['filters[startDate][GREATER_THAN]=2026-05-02T00:00:00Z&filters[endDate][LESS_THAN]=2026-05-04T00:00:00Z', ['e3', 'e2']],
    ['filters[q][EQUALS]=WORLD', ['e2']],
    ['filters[scope][EQUALS]=SYSTEM', ['e4']],
    ['filters[scope][EQUALS]=USER', ['e5', 'e3', 'e2', 'e1']],
    ['filters[childFilter][EQUALS]=CHILD', ['e5']],
    ['filters[childFilter][EQUALS]=MAIN&filters[namespace][PREFIX]=company', ['e2', 'e1']],
    ['filters[triggerExecutionId][EQUALS]=e1', ['e5']],
    ['filters[kind][EQUALS]=NORMAL&filters[flowId][EQUALS]=hello', ['e5', 'e1']],
    ['filters[timeRange][EQUALS]=PT1H', []],
    // legacy parameters keep working, beside filters too
    ['namespace=company.team', ['e5', 'e2', 'e1']],
    ['namespace=company.team&filters[state][EQUALS]=SUCCESS', ['e1']],
    ['q=other', ['e3']],
    ['childFilter=CHILD', ['e5']],
    ['labels=env:dev', ['e2']],
  ])('%s', async (query, expected) => {
    expect(await ids(`/executions/search?${query}`)).toEqual(expected);
  });

  it('timeRange takes the executions started within the duration before now', async () => {
    const recent = filterExecutions()[0]!;
    await api.stores.executions.create({ ...recent, id: 'recent', state: { ...recent.state, startDate: new Date().toISOString() } });
    try {
      expect(await ids('/executions/search?filters[timeRange][EQUALS]=PT24H')).toEqual(['recent']);
    } finally {
      await api.stores.executions.delete('recent');
    }
  });

  it('pages the filtered results with their total', async () => {
    const res = await get('/executions/search?filters[namespace][STARTS_WITH]=company&size=2&page=2');
    expect(res.body.total).toBe(4);
    expect(res.body.results.map((e: { id: string }) => e.id)).toEqual(['e2', 'e1']);
  });
});

describe('filter errors are 400s naming the parameter', () => {
  it.each([
    ['/executions/search?filters[nope][EQUALS]=x', 'filters[nope][EQUALS]', /Unknown filter field 'nope'/],
    ['/executions/search?filters[level][EQUALS]=INFO', 'filters[level][EQUALS]', /not supported by the executions search/],
    ['/flows/search?filters[state][EQUALS]=SUCCESS', 'filters[state][EQUALS]', /not supported by the flows search/],
    ['/executions/search?filters[state][CONTAINS]=SUC', 'filters[state][CONTAINS]', /Operation CONTAINS is not supported for field 'state'/],
    ['/executions/search?filters[namespace][LIKE]=x', 'filters[namespace][LIKE]', /Unknown filter operation 'LIKE'/],
    ['/executions/search?filters[namespace]=x', 'filters[namespace]', /expected filters\[field\]\[OPERATION\]/],
    ['/executions/search?filters[state][EQUALS]=DONE', 'filters[state][EQUALS]', /Invalid value 'DONE'/],
    ['/executions/search?filters[startDate][GREATER_THAN]=yesterday', 'filters[startDate][GREATER_THAN]', /ISO 8601 date-time/],
    ['/executions/search?filters[timeRange][EQUALS]=24h', 'filters[timeRange][EQUALS]', /ISO 8601 duration/],
    ['/executions/search?filters[namespace][REGEX]=(%3F%3Dx)a', 'filters[namespace][REGEX]', /Invalid regular expression/],
    ['/executions/search?filters[namespace][REGEX]=(a', 'filters[namespace][REGEX]', /Invalid regular expression/],
    ['/executions/search?filters[labels][EQUALS]=novalue', 'filters[labels][EQUALS]', /expected 'key:value'/],
    ['/executions/search?filters[labels][EQUALS][__proto__]=x', 'filters[labels][EQUALS][__proto__]', /reserved/],
    ['/executions/search?filters[namespace][EQUALS][k]=x', 'filters[namespace][EQUALS][k]', /only labels take a key/],
    ['/executions/search?filters[scope][EQUALS]=USER,SYSTEM', 'filters[scope][EQUALS]', /Only one scope/],
    ['/executions/search?filters[childFilter][EQUALS]=ALL', 'filters[childFilter][EQUALS]', /CHILD or MAIN/],
    ['/executions/search?filters[flowId][EQUALS]=', 'filters[flowId][EQUALS]', /needs a value/],
    ['/logs/search?filters[level][EQUALS]=LOUD', 'filters[level][EQUALS]', /Invalid value 'LOUD'/],
    ['/triggers/search?filters[triggerState][EQUALS]=paused', 'filters[triggerState][EQUALS]', /enabled or disabled/],
    ['/executions/search?q=x&scope=PUBLIC', 'scope', /Invalid value 'PUBLIC'/],
  ])('%s', async (path, param, message) => {
    const res = await get(path);
    expect(res.status).toBe(400);
    expect(res.body.message).toMatch(message);
    expect(res.body.errors?.[0]?.path).toBe(param);
  });

  it('a REGEX longer than SEARCH_REGEX_MAX_LENGTH and more values than SEARCH_FILTER_MAX_VALUES are refused naming the setting', async () => {
    const long = await get('/executions/search?filters[namespace][REGEX]=abcdefghijk', small);
    expect(long.status).toBe(400);
    expect(long.body.message).toMatch(/SEARCH_REGEX_MAX_LENGTH/);
    const many = await get('/executions/search?filters[namespace][IN]=a,b,c', small);
    expect(many.status).toBe(400);
    expect(many.body.message).toMatch(/SEARCH_FILTER_MAX_VALUES/);
    const filters = await get('/executions/search?filters[namespace][EQUALS]=a&filters[flowId][EQUALS]=b&filters[q][EQUALS]=c', small);
    expect(filters.status).toBe(400);
    expect(filters.body.message).toMatch(/3 search filters: over the limit of 2 \(setting SEARCH_FILTER_MAX_VALUES\)/);
    expect((await get('/executions/search?filters[namespace][REGEX]=%5Ecompany', small)).status).toBe(200);
  });
});

describe('GET /flows/search with filters', () => {
  it.each([
    ['filters[namespace][PREFIX]=company.team', ['f1', 'scheduled', 'f2']],
    ['filters[labels][EQUALS][env]=prod', ['f1']],
    ['filters[labels][EQUALS]=env:dev', ['f2']],
    ['filters[labels][NOT_IN][env]=prod', ['scheduled', 'f2', 'f3']],
    ['filters[flowId][STARTS_WITH]=f', ['f1', 'f2', 'f3']],
    ['filters[q][EQUALS]=nightly', ['f2']],
    ['filters[scope][EQUALS]=SYSTEM', ['f3']],
    ['filters[scope][NOT_EQUALS]=SYSTEM&filters[flowId][REGEX]=%5Ef', ['f1', 'f2']],
    ['namespace=company.team&q=sched', ['scheduled']],
    ['labels=env:prod', ['f1']],
  ])('%s', async (query, expected) => {
    expect(await ids(`/flows/search?${query}`)).toEqual(expected);
  });
});

describe('GET /logs/search with filters', () => {
  const messages = async (query: string): Promise<string[]> => {
    const res = await get(`/logs/search?${query}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body.results.map((l: { message: string }) => l.message.split(' ')[0]);
  };
  it.each([
    ['filters[executionId][EQUALS]=x2', ['l5', 'l4']],
    ['filters[level][EQUALS]=WARN', ['l4', 'l3']],
    ['filters[namespace][PREFIX]=company.team&filters[q][EQUALS]=alpha', ['l3', 'l1']],
    ['filters[startDate][GREATER_THAN]=2026-05-01T10:00:00Z&filters[endDate][LESS_THAN]=2026-05-04T10:00:00Z', ['l3', 'l2']],
    ['filters[flowId][IN]=nightly,other', ['l4', 'l3']],
    ['filters[triggerId][EQUALS]=daily', []],
    ['q=beta&minLevel=WARN', ['l3']],
    ['startDate=2026-05-04T00:00:00Z', ['l5', 'l4']],
  ])('%s', async (query, expected) => {
    expect(await messages(query)).toEqual(expected);
  });
});

describe('GET /triggers/search with filters', () => {
  const triggerIds = async (query: string): Promise<string[]> => {
    const res = await get(`/triggers/search?${query}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.total).toBe(res.body.results.length);
    return res.body.results.map((t: { triggerContext: { triggerId: string } }) => t.triggerContext.triggerId);
  };
  it.each([
    ['', ['daily', 'off']],
    ['filters[triggerState][EQUALS]=disabled', ['off']],
    ['filters[triggerState][NOT_EQUALS]=disabled', ['daily']],
    ['filters[triggerId][STARTS_WITH]=da', ['daily']],
    ['filters[namespace][PREFIX]=company&filters[flowId][EQUALS]=scheduled', ['daily', 'off']],
    ['filters[scope][EQUALS]=SYSTEM', []],
    ['filters[workerId][EQUALS]=w1', []],
    ['filters[q][EQUALS]=DAI', ['daily']],
    // dates compare the next execution date; a disabled trigger has none
    ['filters[startDate][GREATER_THAN]=2000-01-01T00:00:00Z', ['daily']],
    ['filters[startDate][LESS_THAN]=2000-01-01T00:00:00Z', []],
  ])('%s', async (query, expected) => {
    expect(await triggerIds(query)).toEqual(expected);
  });
});

describe('GET /executions/flows/{namespace}/{flowId}', () => {
  it('answers the executions of that flow only (not of child namespaces), newest first, with the filters', async () => {
    expect(await ids('/executions/flows/company.team/hello')).toEqual(['e5', 'e1']);
    expect(await ids('/executions/flows/company.team/hello?filters[state][EQUALS]=SUCCESS')).toEqual(['e1']);
    expect(await ids('/executions/flows/company/hello')).toEqual([]);
  });
});
