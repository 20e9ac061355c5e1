// Slack notifications (Kestra's notifications.slack): SlackIncomingWebhook posts a payload the flow writes to an
// incoming webhook; SlackExecution posts a summary of an execution (Kestra's slack-template: headline, outcome, a
// Details button to the execution page, an attachment with its fields). Rocket.Chat and Mattermost accept the same.
import { definePlugin, p } from '../define.js';
import { httpOptions, sendWebhook } from './post.js';
import { executionProps, executionSummary, fieldText, headline, outcomeLine, stateColor, type ExecutionSummary } from './summary.js';

const url = () => p.string().required().secret()
  .describe('The Slack incoming webhook URL (a credential: use `{{ secret(\'SLACK_WEBHOOK\') }}`; masked in logs and outputs).');

export const slackIncomingWebhook = definePlugin({
  type: 'notifications.slack.SlackIncomingWebhook',
  title: 'Send a Slack message using an incoming webhook',
  description: 'Posts `payload` (JSON text: `text`, `blocks`, `attachments`...; see Slack\'s incoming webhook documentation) '
    + 'to the webhook URL. A 4xx/5xx answer fails the task naming the status (never the URL). Typical in a flow\'s '
    + '`errors` branch to alert on failure.',
  properties: {
    url: url(),
    payload: p.string().describe('The Slack message payload: JSON text.'),
    options: httpOptions,
  },
  examples: [{
    title: 'Alert Slack when the flow fails',
    code: `id: unreliable_flow
namespace: company.team
tasks:
  - id: fail
    type: io.kestra.plugin.core.execution.Fail
errors:
  - id: alert_on_failure
    type: io.kestra.plugin.notifications.slack.SlackIncomingWebhook
    url: "{{ secret('SLACK_WEBHOOK') }}"
    payload: |
      { "text": "Failure alert for flow {{ flow.namespace }}.{{ flow.id }} with ID {{ execution.id }}" }`,
  }],
  async run(ctx, props) {
    await sendWebhook(ctx, { url: props.url, body: props.payload ?? '{}', options: props.options, what: 'Slack webhook' });
    return { state: 'SUCCESS' };
  },
});

/** Kestra's slack-template.peb, built as data. */
export function slackExecutionPayload(s: ExecutionSummary): Record<string, unknown> {
  const e = s.execution;
  const title = s.link ? `*<${s.link}|${headline(s)}>*` : `*${headline(s)}*`;
  const text = `${title}\n> ${outcomeLine(s)}`;
  const blocks: unknown[] = [];
  if (s.customMessage !== undefined) blocks.push({ type: 'section', text: { type: 'mrkdwn', text: s.customMessage } });
  blocks.push({
    type: 'section', text: { type: 'mrkdwn', text },
    ...(s.link ? { accessory: { type: 'button', text: { type: 'plain_text', text: 'Details' }, url: s.link } } : {}),
  });
  const fields = [['Namespace', e.namespace], ['Job', e.flowId], ['Execution', e.id], ['Status', e.state.current]]
    .map(([title, value]) => ({ title, value, short: true }));
  for (const [k, v] of Object.entries(s.customFields ?? {})) fields.push({ title: k, value: fieldText(v), short: true });
  return {
    text, blocks,
    attachments: [{ color: stateColor(s), fields, ts: Math.floor(Date.parse(s.startDate) / 1000) }],
  };
}

export const slackExecution = definePlugin({
  type: 'notifications.slack.SlackExecution',
  title: 'Send a Slack message with the execution information',
  description: 'Posts a summary of an execution to a Slack incoming webhook: namespace, flow, execution id, state, '
    + 'duration, the failed task (or the last one), and a Details button linking to the execution page when the '
    + '`PUBLIC_URL` setting is set. By default the current execution; in a flow started by a Flow trigger, '
    + 'set `executionId: "{{ trigger.executionId }}"` (an execution of its own namespace or one ALLOWED_NAMESPACES grants).',
  properties: {
    url: url(),
    channel: p.string().describe('Slack channel to send the message to.'),
    username: p.string().describe('Author of the message.'),
    iconUrl: p.string().describe('URL of the icon to use.'),
    iconEmoji: p.string().describe('Emoji icon to use.'),
    ...executionProps,
    options: httpOptions,
  },
  examples: [{
    title: 'Alert Slack when a flow of the `prod` namespace fails',
    code: `id: failure_alert
namespace: prod
tasks:
  - id: send_alert
    type: io.kestra.plugin.notifications.slack.SlackExecution
    url: "{{ secret('SLACK_WEBHOOK') }}"
    executionId: "{{ trigger.executionId }}"
triggers:
  - id: failed_prod_workflows
    type: io.kestra.plugin.core.trigger.Flow
    conditions:
      - type: io.kestra.plugin.core.condition.ExecutionStatus
        in: [FAILED, WARNING]
      - type: io.kestra.plugin.core.condition.ExecutionNamespace
        namespace: prod
        prefix: true`,
  }],
  async run(ctx, props) {
    const payload: Record<string, unknown> = slackExecutionPayload(await executionSummary(ctx, props));
    if (props.channel !== undefined) payload.channel = props.channel;
    if (props.username !== undefined) payload.username = props.username;
    if (props.iconUrl !== undefined) payload.icon_url = props.iconUrl;
    if (props.iconEmoji !== undefined) payload.icon_emoji = props.iconEmoji;
    await sendWebhook(ctx, { url: props.url, body: JSON.stringify(payload), options: props.options, what: 'Slack webhook' });
    return { state: 'SUCCESS' };
  },
});
