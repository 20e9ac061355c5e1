// The webhook notification types end to end: flows run by the embedded service (real SQLite, controller, API) post to
// a real HTTP server on loopback, which records what it receives; the JSON bodies are asserted as Slack, Teams, Discord
// and the generic receiver get them. Error answers (404, 500) fail the task with the status named and the secret URL
// nowhere; *Execution tasks summarise the current execution, one a Flow trigger names, and never another tenant's.
import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSecretRenderer } from '../../controller/secrets.js';
import type { Execution } from '../../core/types.js';
import { createFlowTriggerComponent } from '../../triggers/flow-trigger.js';
import type { TriggerComponent } from '../../triggers/types.js';
import { startEmbedded, type Embedded } from '../../../test/support/embedded.js';
import { until } from '../../../test/support/wait.js';

interface Received { method: string; path: string; headers: IncomingMessage['headers']; body: string; json?: any }

const TOKEN = 'T000/B000/XyZsEcReTtOkEn42';
const received: Received[] = [];
let server: Server;
let base: string;
let env: Embedded;
let flowTriggers: TriggerComponent | undefined;
const TERMINAL = ['SUCCESS', 'WARNING', 'FAILED', 'KILLED'];

const b64 = (s: string) => Buffer.from(s).toString('base64');

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (c) => { body += c; });
    req.on('end', () => {
      const r: Received = { method: req.method!, path: req.url!, headers: req.headers, body };
      try { r.json = JSON.parse(body); } catch { /* not JSON */ }
      received.push(r);
      if (req.url!.startsWith('/status/')) {
        const code = Number(req.url!.split('/')[2]);
        res.writeHead(code, { 'content-type': 'text/plain' }).end(code === 404 ? 'no_service' : 'internal_error: try later');
        return;
      }
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  process.env.PUBLIC_URL = 'https://flowpilot.example.com/';
  env = await startEmbedded({
    PATH: process.env.PATH,
    SECRET_SLACK_WEBHOOK: b64(`${base}/services/${TOKEN}`),
    SECRET_HOOK_404: b64(`${base}/status/404/${TOKEN}`),
    SECRET_HOOK_500: b64(`${base}/status/500/${TOKEN}`),
  });
}, 60_000);

afterAll(async () => {
  await flowTriggers?.stop();
  await env?.close();
  await new Promise((r) => server?.close(r));
  delete process.env.PUBLIC_URL;
});

async function run(yaml: string, inputs: Record<string, unknown> = {}): Promise<Execution> {
  const flow = await env.createFlow(yaml);
  const created = await env.execute(flow.namespace, flow.id, 'create', inputs);
  return env.waitFor(created.id, (e) => TERMINAL.includes(e?.state?.current));
}

const to = (path: string) => received.filter((r) => r.path === path);
const taskRun = (e: Execution, id: string) => e.taskRunList.find((r) => r.taskId === id)!;
const logsOf = async (id: string) => (await env.json(`/logs/${id}`)).body as { message: string }[];

describe('notify on failure (examples/flows/notify-on-failure.yaml)', () => {
  it('the errors branch posts the message and the execution summary to the Slack webhook', async () => {
    const before = received.length;
    const e = await run(readFileSync(new URL('../../../examples/flows/notify-on-failure.yaml', import.meta.url), 'utf8'));
    expect(e.state.current).toBe('FAILED');
    expect(taskRun(e, 'alert_slack').state.current).toBe('SUCCESS');
    expect(taskRun(e, 'summary').state.current).toBe('SUCCESS');
    const got = received.slice(before);
    expect(got.map((r) => [r.method, r.path, r.headers['content-type']])).toEqual([
      ['POST', `/services/${TOKEN}`, 'application/json'], ['POST', `/services/${TOKEN}`, 'application/json']]);
    expect(got[0].json).toEqual({ text: `Failure alert for flow company.team.notify_on_failure with ID ${e.id}` });
    const link = `https://flowpilot.example.com/ui/executions/company.team/notify_on_failure/${e.id}`;
    const s = got[1].json;
    expect(s.username).toBe('flowpilot');
    expect(s.text).toMatch(new RegExp(`^\\*<${link}\\|\\[company\\.team\\] notify_on_failure ➛ RUNNING>\\*\\n> Failed on task \`load\` after \\d\\d:\\d\\d:\\d\\d\\.\\d{3}$`));
    expect(s.blocks[0]).toEqual({ type: 'section', text: { type: 'mrkdwn', text: 'The nightly load failed' } });
    expect(s.blocks[1].accessory).toEqual({ type: 'button', text: { type: 'plain_text', text: 'Details' }, url: link });
    expect(s.attachments[0].color).toBe('danger');
    expect(s.attachments[0].fields).toEqual([
      { title: 'Namespace', value: 'company.team', short: true }, { title: 'Job', value: 'notify_on_failure', short: true },
      { title: 'Execution', value: e.id, short: true }, { title: 'Status', value: 'RUNNING', short: true }]);
    expect(s.attachments[0].ts).toBe(Math.floor(Date.parse(e.state.startDate) / 1000));
  });

  it('sends nothing when the flow succeeds', async () => {
    const before = received.length;
    const e = await run(readFileSync(new URL('../../../examples/flows/notify-on-failure.yaml', import.meta.url), 'utf8').replace('id: notify_on_failure', 'id: notify_ok'), { fail: false });
    expect(e.state.current).toBe('SUCCESS');
    expect(received.length).toBe(before);
  });
});

describe('error answers', () => {
  it.each([[404, 'HOOK_404', 'no_service'], [500, 'HOOK_500', 'internal_error: try later']])(
    'HTTP %i fails the task naming the status and the answer, never the secret URL', async (code, secret, answer) => {
      const e = await run(`id: hook_${code}
namespace: company.team
tasks:
  - id: slack
    type: io.kestra.plugin.notifications.slack.SlackIncomingWebhook
    url: "{{ secret('${secret}') }}"
    payload: '{"text": "hi"}'
`);
      const r = taskRun(e, 'slack');
      expect(e.state.current).toBe('FAILED');
      expect(r.state.current).toBe('FAILED');
      const logs = (await logsOf(e.id)).map((l) => l.message).join('\n');
      expect(logs).toContain(`Slack webhook failed with HTTP status ${code}`);
      expect(logs).toContain(answer);
      expect(JSON.stringify(e) + logs).not.toContain(TOKEN);
      expect(to(`/status/${code}/${TOKEN}`).length).toBeGreaterThan(0);
    });

  it('an unreachable server fails the task naming the host, not the path', async () => {
    const e = await run(`id: hook_down
namespace: company.team
tasks:
  - id: discord
    type: io.kestra.plugin.notifications.discord.DiscordIncomingWebhook
    url: "http://127.0.0.1:1/api/webhooks/${TOKEN}"
    payload: '{"content": "hi"}'
`);
    expect(taskRun(e, 'discord').state.current).toBe('FAILED');
    const logs = (await logsOf(e.id)).map((l) => l.message).join('\n');
    expect(logs).toContain("Discord webhook to host '127.0.0.1:1' failed");
    expect(JSON.stringify(e) + logs).not.toContain(TOKEN);
  });

  it('a flow is refused when a property is unknown (never silently ignored)', async () => {
    const r = await env.json('/flows', { method: 'POST', headers: { 'Content-Type': 'application/x-yaml' }, body: `id: bad
namespace: company.team
tasks:
  - id: slack
    type: io.kestra.plugin.notifications.slack.SlackIncomingWebhook
    url: http://x
    channnel: typo
` });
    expect(r.status).toBe(422);
    expect(JSON.stringify(r.body)).toContain('channnel');
  });
});

describe('Teams, Discord and the generic webhook', () => {
  it('posts their payloads and execution summaries', async () => {
    const e = await run(`id: many
namespace: company.team
tasks:
  - id: teams
    type: io.kestra.plugin.notifications.teams.TeamsIncomingWebhook
    url: "${base}/teams"
    payload: '{"@type": "MessageCard", "summary": "{{ flow.id }}"}'
  - id: teams_exec
    type: io.kestra.plugin.notifications.teams.TeamsExecution
    url: "${base}/teams"
    activityTitle: Done
    customFields: { team: data, rows: 3 }
  - id: discord_exec
    type: io.kestra.plugin.notifications.discord.DiscordExecution
    url: "${base}/discord"
    username: bot
    content: "Execution {{ execution.id }}"
    embedList:
      - { title: Nightly, color: [255, 0, 0], footer: ignored }
  - id: generic
    type: io.kestra.plugin.notifications.webhook.Webhook
    url: "${base}/generic"
    method: PUT
    options: { headers: { X-Flow: "{{ flow.id }}" }, readTimeout: PT5S }
    payload: '{"text": "hello {{ flow.id }}", "n": 2}'
  - id: generic_exec
    type: io.kestra.plugin.notifications.webhook.WebhookExecution
    url: "${base}/generic-exec"
    customMessage: all good
`);
    expect(e.state.current).toBe('SUCCESS');
    const [teams, teamsExec] = to('/teams').slice(-2).map((r) => r.json);
    expect(teams).toEqual({ '@type': 'MessageCard', summary: 'many' });
    expect(teamsExec).toMatchObject({ '@type': 'MessageCard', themeColor: '0076D7' });
    expect(teamsExec.sections[0].activityTitle).toBe('Done');
    expect(teamsExec.sections[0].facts).toEqual([
      { name: 'Namespace', value: 'company.team' }, { name: 'Job', value: 'many' }, { name: 'Execution', value: e.id },
      { name: 'Status', value: 'RUNNING' }, { name: 'team', value: 'data' }, { name: 'rows', value: '3' }]);
    expect(teamsExec.potentialAction[0].targets[0].uri).toBe(`https://flowpilot.example.com/ui/executions/company.team/many/${e.id}`);
    const discord = to('/discord').at(-1)!.json;
    expect(discord).toMatchObject({ username: 'bot', content: `Execution ${e.id}`, tts: false });
    expect(discord.embeds).toHaveLength(1);
    expect(discord.embeds[0]).toMatchObject({ title: 'Nightly', color: 0xff0000 });
    expect(discord.embeds[0].description).toBe(`Namespace: company.team\nFlow ID: many\nExecution ID: ${e.id}\nExecution Status: RUNNING`);
    expect(discord.embeds[0].footer.text).toMatch(/^Succeeded after \d\d:\d\d:\d\d\.\d{3}$/);
    const generic = to('/generic').at(-1)!;
    expect(generic.method).toBe('PUT');
    expect(generic.headers['x-flow']).toBe('many');
    expect(generic.json).toEqual({ text: 'hello many', n: 2 });
    expect(to('/generic-exec').at(-1)!.json).toMatchObject({
      executionId: e.id, namespace: 'company.team', flowId: 'many', state: 'RUNNING', failedTaskId: null,
      lastTaskId: 'generic', customMessage: 'all good', link: `https://flowpilot.example.com/ui/executions/company.team/many/${e.id}`,
    });
  });
});

describe('*Execution from a Flow trigger', () => {
  it('summarises the execution the trigger names, once it ended; another tenant\'s execution reads as absent', async () => {
    await env.createFlow(`id: watcher
namespace: company.team
tasks:
  - id: alert
    type: io.kestra.plugin.notifications.slack.SlackExecution
    url: "${base}/watch"
    executionId: "{{ trigger.executionId }}"
    customFields: { env: prod }
triggers:
  - id: on_failure
    type: io.kestra.plugin.core.trigger.Flow
    conditions:
      - { type: io.kestra.plugin.core.condition.ExecutionFlowCondition, namespace: company.team, flowId: breaks }
      - { type: io.kestra.plugin.core.condition.ExecutionStatusCondition, in: [FAILED] }
`);
    flowTriggers = createFlowTriggerComponent({ checkpointEveryMs: 0 });
    await flowTriggers.start({ stores: env.stores, renderer: createSecretRenderer(env.stores, {}), clock: () => new Date(), env: {}, onError: () => {} });
    const failed = await run(`id: breaks
namespace: company.team
tasks:
  - { id: ok, type: io.kestra.plugin.core.debug.Return, format: x }
  - { id: boom, type: io.kestra.plugin.core.execution.Fail, errorMessage: broken }
`);
    expect(failed.state.current).toBe('FAILED');
    const msg = await until(() => to('/watch').at(-1)?.json, 'the watcher\'s Slack message');
    expect(msg.text).toContain(`[company.team] breaks ➛ FAILED`);
    expect(msg.text).toContain('Failed on task `boom`');
    expect(msg.attachments[0].fields).toContainEqual({ title: 'Execution', value: failed.id, short: true });
    expect(msg.attachments[0].fields).toContainEqual({ title: 'env', value: 'prod', short: true });

    const other = await run(`id: elsewhere
namespace: other.tenant
tasks:
  - { id: ok, type: io.kestra.plugin.core.debug.Return, format: x }
`);
    const e = await run(`id: snoop
namespace: company.team
tasks:
  - id: alert
    type: io.kestra.plugin.notifications.webhook.WebhookExecution
    url: "${base}/snoop"
    executionId: ${other.id}
`);
    expect(taskRun(e, 'alert').state.current).toBe('FAILED');
    expect((await logsOf(e.id)).map((l) => l.message).join('\n')).toContain(`Execution '${other.id}' not found in a namespace this flow may read`);
    expect(to('/snoop')).toEqual([]);
  });
});
