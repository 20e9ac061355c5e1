// The notification task types (Kestra's plugin-notifications: Slack, Microsoft Teams, Discord, e-mail) and the
// generic webhook, as listed in the built-in catalog (operator/plugins/catalog.ts).
import type { PluginDefinition } from '../define.js';
import { discordExecution, discordIncomingWebhook } from './discord.js';
import { mailExecution, mailSend } from './mail.js';
import { slackExecution, slackIncomingWebhook } from './slack.js';
import { teamsExecution, teamsIncomingWebhook } from './teams.js';
import { webhook, webhookExecution } from './webhook.js';

export const NOTIFICATION_DEFINITIONS: readonly PluginDefinition[] = [
  slackIncomingWebhook, slackExecution, teamsIncomingWebhook, teamsExecution, discordIncomingWebhook, discordExecution,
  webhook, webhookExecution, mailSend, mailExecution,
];
