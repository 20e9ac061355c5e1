// Discord notifications (Kestra's notifications.discord): DiscordIncomingWebhook posts a payload the flow writes to a
// Discord webhook; DiscordExecution posts a message whose embed summarises an execution (Kestra's discord-template:
// the ids and state, the outcome in the footer), with the flow's own embeds, username, avatar and content.
import { definePlugin, p, type PropValues } from '../define.js';
import { httpOptions, sendWebhook } from './post.js';
import { executionProps, executionSummary, fieldText, headline, outcomeLine, stateColor, type ExecutionSummary } from './summary.js';

const url = () => p.string().required().secret()
  .describe('The Discord webhook URL, from the channel\'s Integrations tab (a credential: use a secret; masked in logs and outputs).');

export const discordIncomingWebhook = definePlugin({
  type: 'notifications.discord.DiscordIncomingWebhook',
  title: 'Send a Discord message using a webhook',
  description: 'Posts `payload` (JSON text: `content`, `username`, `embeds`...; see Discord\'s webhook documentation) to '
    + 'the webhook URL. A 4xx/5xx answer fails the task naming the status (never the URL).',
  properties: {
    url: url(),
    payload: p.string().describe('The Discord message payload: JSON text.'),
    options: httpOptions,
  },
  examples: [{
    title: 'Alert Discord when the flow fails',
    code: `id: unreliable_flow
namespace: company.team
tasks:
  - id: fail
    type: io.kestra.plugin.core.execution.Fail
errors:
  - id: alert_on_failure
    type: io.kestra.plugin.notifications.discord.DiscordIncomingWebhook
    url: "{{ secret('DISCORD_WEBHOOK') }}"
    payload: |
      { "username": "MyUsername", "content": "Failure alert for flow {{ flow.namespace }}.{{ flow.id }} with ID {{ execution.id }}" }`,
  }],
  async run(ctx, props) {
    await sendWebhook(ctx, { url: props.url, body: props.payload ?? '{}', options: props.options, what: 'Discord webhook' });
    return { state: 'SUCCESS' };
  },
});

const embedProps = {
  title: p.string().describe('Title of the embed.'),
  websiteUrl: p.string().describe('URL the title links to.'),
  description: p.string().describe('Text of the embed.'),
  thumbnail: p.string().describe('URL of the thumbnail image.'),
  authorName: p.string().describe('Name of the author shown on the embed.'),
  color: p.any().describe('RGB colour of the embed, e.g. [255, 255, 255].'),
  footer: p.string().describe('Footer text.'),
};
type Embed = PropValues<typeof embedProps>;

/** `[r, g, b]` → Discord's integer colour. */
export function rgb(value: unknown, name: string): number {
  if (!Array.isArray(value) || value.length < 3 || !value.slice(0, 3).every((c) => Number.isInteger(c) && c >= 0 && c <= 255)) {
    throw new Error(`Property '${name}' must be a list of three integers from 0 to 255 (red, green, blue)`);
  }
  return (value[0] << 16) + (value[1] << 8) + value[2];
}

function embedMap(e: Embed, i: number, avatarUrl: string | undefined): Record<string, unknown> {
  const m: Record<string, unknown> = {};
  if (e.title !== undefined) m.title = e.title;
  if (e.description !== undefined) m.description = e.description;
  if (e.websiteUrl !== undefined) m.url = e.websiteUrl;
  if (e.thumbnail !== undefined) m.thumbnail = { url: e.thumbnail };
  if (e.authorName !== undefined) m.author = { name: e.authorName, ...(e.websiteUrl ? { url: e.websiteUrl } : {}), ...(avatarUrl ? { icon_url: avatarUrl } : {}) };
  if (e.color !== undefined) m.color = rgb(e.color, `embedList[${i}].color`);
  if (e.footer !== undefined) m.footer = { text: e.footer };
  return m;
}

const COLORS = { good: 0x2eb886, warning: 0xdaa038, danger: 0xa30200 } as const;

/** The summary embed (Kestra's discord-template), the flow's customMessage and customFields added. */
export function discordSummaryEmbed(s: ExecutionSummary): Record<string, unknown> {
  const e = s.execution;
  const lines = [`Namespace: ${e.namespace}`, `Flow ID: ${e.flowId}`, `Execution ID: ${e.id}`, `Execution Status: ${e.state.current}`];
  return {
    title: headline(s),
    description: [...(s.customMessage !== undefined ? [s.customMessage, ''] : []), ...lines].join('\n'),
    ...(s.link ? { url: s.link } : {}),
    color: COLORS[stateColor(s)],
    ...(s.customFields ? { fields: Object.entries(s.customFields).map(([name, v]) => ({ name, value: fieldText(v), inline: true })) } : {}),
    footer: { text: outcomeLine(s) },
    timestamp: s.startDate,
  };
}

export const discordExecution = definePlugin({
  type: 'notifications.discord.DiscordExecution',
  title: 'Send a Discord message with the execution information',
  description: 'Posts a message to a Discord webhook whose embed summarises an execution: namespace, flow, execution id, '
    + 'state, duration, the failed task, and a link to the execution page when the `PUBLIC_URL` setting is set. The '
    + 'summary is merged into the first of `embedList` (as Kestra does), or is the only embed. By default the current '
    + 'execution; from a Flow trigger, set `executionId: "{{ trigger.executionId }}"`.',
  properties: {
    url: url(),
    username: p.string().describe('Webhook username.'),
    avatarUrl: p.string().describe('Webhook avatar URL.'),
    embedList: p.objectList(embedProps).describe('Embeds added to the message.'),
    content: p.string().describe('Message content.'),
    ...executionProps,
    options: httpOptions,
  },
  examples: [{
    title: 'Notify Discord of failed executions',
    code: `id: failure_alert
namespace: company.team
tasks:
  - id: send_alert
    type: io.kestra.plugin.notifications.discord.DiscordExecution
    url: "{{ secret('DISCORD_WEBHOOK') }}"
    username: MyUsername
    embedList:
      - title: Discord Notification
        color: [255, 255, 255]
    executionId: "{{ trigger.executionId }}"
triggers:
  - id: failed
    type: io.kestra.plugin.core.trigger.Flow
    conditions:
      - type: io.kestra.plugin.core.condition.ExecutionStatus
        in: [FAILED, WARNING]`,
  }],
  async run(ctx, props) {
    const summary = discordSummaryEmbed(await executionSummary(ctx, props));
    const embeds = (props.embedList ?? []).map((e, i) => embedMap(e, i, props.avatarUrl));
    if (embeds.length) embeds[0] = { ...embeds[0], ...summary, ...(embeds[0].title !== undefined ? { title: embeds[0].title } : {}), ...(embeds[0].color !== undefined ? { color: embeds[0].color } : {}) };
    else embeds.push(summary);
    const payload: Record<string, unknown> = { tts: false, embeds };
    if (props.username !== undefined) payload.username = props.username;
    if (props.avatarUrl !== undefined) payload.avatar_url = props.avatarUrl;
    if (props.content !== undefined) payload.content = props.content;
    await sendWebhook(ctx, { url: props.url, body: JSON.stringify(payload), options: props.options, what: 'Discord webhook' });
    return { state: 'SUCCESS' };
  },
});
