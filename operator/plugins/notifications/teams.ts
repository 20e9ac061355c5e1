// Microsoft Teams notifications (Kestra's notifications.teams): TeamsIncomingWebhook posts a payload the flow writes
// (a MessageCard or an Adaptive Card message) to an incoming webhook or a Workflows URL; TeamsExecution posts a
// MessageCard summarising an execution (Kestra's teams-template, plus a Details action to its page).
import { definePlugin, p } from '../define.js';
import { httpOptions, sendWebhook } from './post.js';
import { executionProps, executionSummary, fieldText, headline, outcomeLine, type ExecutionSummary } from './summary.js';

const url = () => p.string().required().secret()
  .describe('The Microsoft Teams incoming webhook URL (a credential: use a secret; masked in logs and outputs).');

export const teamsIncomingWebhook = definePlugin({
  type: 'notifications.teams.TeamsIncomingWebhook',
  title: 'Send a Microsoft Teams message using an incoming webhook',
  description: 'Posts `payload` (JSON text: a MessageCard or an Adaptive Card message) to the webhook URL. A 4xx/5xx '
    + 'answer fails the task naming the status (never the URL).',
  properties: {
    url: url(),
    payload: p.string().describe('The Microsoft Teams message payload: JSON text.'),
    options: httpOptions,
  },
  examples: [{
    title: 'Send a MessageCard',
    code: `- id: teams
  type: io.kestra.plugin.notifications.teams.TeamsIncomingWebhook
  url: "{{ secret('TEAMS_WEBHOOK') }}"
  payload: |
    {
      "@type": "MessageCard",
      "@context": "http://schema.org/extensions",
      "themeColor": "0076D7",
      "summary": "Notification message",
      "sections": [{ "activityTitle": "Rolling Workflow started", "activitySubtitle": "Workflow Notification", "markdown": true }]
    }`,
  }],
  async run(ctx, props) {
    await sendWebhook(ctx, { url: props.url, body: props.payload ?? '{}', options: props.options, what: 'Microsoft Teams webhook' });
    return { state: 'SUCCESS' };
  },
});

export function teamsExecutionPayload(s: ExecutionSummary, card: { themeColor: string; activityTitle?: string; activitySubtitle?: string }): Record<string, unknown> {
  const e = s.execution;
  const facts = [['Namespace', e.namespace], ['Job', e.flowId], ['Execution', e.id], ['Status', e.state.current]]
    .map(([name, value]) => ({ name, value }));
  for (const [k, v] of Object.entries(s.customFields ?? {})) facts.push({ name: k, value: fieldText(v) });
  const title = s.link ? `*<${s.link}|${headline(s)}>*` : `*${headline(s)}*`;
  return {
    '@type': 'MessageCard',
    '@context': 'http://schema.org/extensions',
    themeColor: card.themeColor,
    summary: `${title}\n> ${outcomeLine(s)}`,
    sections: [{
      ...(card.activityTitle !== undefined ? { activityTitle: card.activityTitle } : {}),
      ...(card.activitySubtitle !== undefined ? { activitySubtitle: card.activitySubtitle } : {}),
      text: [s.customMessage, `${headline(s)}: ${outcomeLine(s)}`].filter((x) => x !== undefined).join('\n\n'),
      facts,
      markdown: true,
    }],
    ...(s.link ? { potentialAction: [{ '@type': 'OpenUri', name: 'Details', targets: [{ os: 'default', uri: s.link }] }] } : {}),
  };
}

export const teamsExecution = definePlugin({
  type: 'notifications.teams.TeamsExecution',
  title: 'Send a Microsoft Teams message with the execution information',
  description: 'Posts a MessageCard summarising an execution to a Microsoft Teams incoming webhook: namespace, flow, '
    + 'execution id, state, duration, the failed task (or the last one), and a Details action linking to the execution '
    + 'page when the `PUBLIC_URL` setting is set. By default the current execution; from a Flow trigger, set '
    + '`executionId: "{{ trigger.executionId }}"`.',
  properties: {
    url: url(),
    themeColor: p.string().default('0076D7').describe('Theme colour of the card (hex, without #).'),
    activityTitle: p.string().describe('Activity title of the card\'s section.'),
    activitySubtitle: p.string().describe('Activity subtitle of the card\'s section.'),
    ...executionProps,
    options: httpOptions,
  },
  examples: [{
    title: 'Notify Teams of failed executions',
    code: `id: failure_alert
namespace: company.team
tasks:
  - id: send_alert
    type: io.kestra.plugin.notifications.teams.TeamsExecution
    url: "{{ secret('TEAMS_WEBHOOK') }}"
    executionId: "{{ trigger.executionId }}"
    activityTitle: Flow failed
triggers:
  - id: failed
    type: io.kestra.plugin.core.trigger.Flow
    conditions:
      - type: io.kestra.plugin.core.condition.ExecutionStatus
        in: [FAILED]`,
  }],
  async run(ctx, props) {
    const payload = teamsExecutionPayload(await executionSummary(ctx, props), props);
    await sendWebhook(ctx, { url: props.url, body: JSON.stringify(payload), options: props.options, what: 'Microsoft Teams webhook' });
    return { state: 'SUCCESS' };
  },
});
