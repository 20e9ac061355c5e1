// A generic webhook notification (Kestra has none: its plugin-notifications has a type per service, and
// core.http.Request for anything else). Webhook sends the payload the flow writes to any URL, the URL treated as a
// credential like the services' ones; WebhookExecution sends a plain JSON summary of an execution, for a receiver of
// one's own (an incident tool, a chat bridge) that no service-specific type fits.
import { definePlugin, p } from '../define.js';
import { httpOptions, sendWebhook } from './post.js';
import { executionProps, executionSummary, type ExecutionSummary } from './summary.js';

const url = () => p.string().required().secret()
  .describe('The webhook URL (treated as a credential: masked in logs and outputs, never named in errors).');
const method = () => p.enum(['POST', 'PUT', 'PATCH'] as const).default('POST').describe('HTTP method.');

export const webhook = definePlugin({
  type: 'notifications.webhook.Webhook',
  title: 'Send a notification to any webhook',
  description: 'Sends `payload` to the URL (POST by default, `Content-Type: application/json` unless `contentType` says '
    + 'otherwise). A 4xx/5xx answer fails the task naming the status (never the URL). Not a Kestra type: Kestra uses '
    + 'core.http.Request for webhooks it has no dedicated task for; this one keeps the URL secret and fails on an error answer.',
  properties: {
    url: url(),
    payload: p.string().describe('The body to send.'),
    contentType: p.string().default('application/json').describe('Content-Type of the body.'),
    method: method(),
    options: httpOptions,
  },
  examples: [{
    title: 'Post a JSON alert',
    code: `- id: alert
  type: io.kestra.plugin.notifications.webhook.Webhook
  url: "{{ secret('ALERT_WEBHOOK') }}"
  payload: |
    { "text": "Flow {{ flow.id }} needs attention", "execution": "{{ execution.id }}" }`,
  }],
  async run(ctx, props) {
    await sendWebhook(ctx, { url: props.url, body: props.payload ?? '', contentType: props.contentType, method: props.method, options: props.options, what: 'Webhook' });
    return { state: 'SUCCESS' };
  },
});

/** The JSON WebhookExecution sends. */
export function webhookExecutionPayload(s: ExecutionSummary): Record<string, unknown> {
  const e = s.execution;
  return {
    executionId: e.id, namespace: e.namespace, flowId: e.flowId, flowRevision: e.flowRevision, state: e.state.current,
    startDate: s.startDate, ...(e.state.endDate ? { endDate: e.state.endDate } : {}), duration: s.duration,
    ...(s.link ? { link: s.link } : {}),
    failedTaskId: s.firstFailed === false ? null : s.firstFailed.taskId,
    lastTaskId: s.lastTask?.taskId ?? null,
    labels: e.labels,
    ...(s.customMessage !== undefined ? { customMessage: s.customMessage } : {}),
    ...(s.customFields ? { customFields: s.customFields } : {}),
  };
}

export const webhookExecution = definePlugin({
  type: 'notifications.webhook.WebhookExecution',
  title: 'Send a JSON summary of an execution to any webhook',
  description: 'Sends `{executionId, namespace, flowId, flowRevision, state, startDate, endDate, duration, link, '
    + 'failedTaskId, lastTaskId, labels, customMessage, customFields}` as JSON to the URL (`link` when the `PUBLIC_URL` '
    + 'setting is set). By default the current execution; from a Flow trigger, set `executionId: "{{ trigger.executionId }}"`. '
    + 'Not a Kestra type (see Webhook).',
  properties: { url: url(), method: method(), ...executionProps, options: httpOptions },
  examples: [{
    title: 'Report every failed execution of the namespace to an incident tool',
    code: `id: report_failures
namespace: company.team
tasks:
  - id: report
    type: io.kestra.plugin.notifications.webhook.WebhookExecution
    url: "{{ secret('INCIDENT_WEBHOOK') }}"
    executionId: "{{ trigger.executionId }}"
triggers:
  - id: failed
    type: io.kestra.plugin.core.trigger.Flow
    conditions:
      - type: io.kestra.plugin.core.condition.ExecutionStatus
        in: [FAILED]`,
  }],
  async run(ctx, props) {
    const body = JSON.stringify(webhookExecutionPayload(await executionSummary(ctx, props)));
    await sendWebhook(ctx, { url: props.url, body, method: props.method, options: props.options, what: 'Webhook' });
    return { state: 'SUCCESS' };
  },
});
