// E-mail over SMTP (Kestra's notifications.mail): MailSend sends a message the flow writes, with attachments and
// embedded images streamed from internal storage (never read whole into memory); MailExecution sends a summary of an
// execution. Transport strategies as Kestra's (simple-java-mail): SMTPS (implicit TLS, the default), SMTP_TLS
// (mandatory, verified STARTTLS), SMTP (plain, with an opportunistic, unverified STARTTLS upgrade) and SMTP_OAUTH2
// (STARTTLS, the password is an OAuth2 access token). Sent with nodemailer, loaded on first use.
import { isIP } from 'node:net';
import { definePlugin, p, type PropValues } from '../define.js';
import type { RunContext } from '../types.js';
import { executionProps, executionSummary, fieldText, headline, outcomeLine, type ExecutionSummary } from './summary.js';

const STRATEGIES = ['SMTP', 'SMTPS', 'SMTP_TLS', 'SMTP_OAUTH2'] as const;
type Strategy = typeof STRATEGIES[number];
const DEFAULT_PORT: Record<Strategy, number> = { SMTP: 25, SMTPS: 465, SMTP_TLS: 587, SMTP_OAUTH2: 587 };

const fileProps = {
  uri: p.string().required().describe('The file: an internal-storage URI (kestra:///...).'),
  name: p.string().required().describe('The file name the recipient sees (e.g. report.csv); for an embedded image, the content id the HTML refers to as `cid:<name>`.'),
  contentType: p.string().default('application/octet-stream').describe('MIME type of the file.'),
};
type MailFile = PropValues<typeof fileProps>;

const serverProps = {
  host: p.string().required().describe('The SMTP server host.'),
  port: p.integer({ min: 1, max: 65535 }).describe('The SMTP server port; default by transportStrategy: 465 (SMTPS), 587 (SMTP_TLS, SMTP_OAUTH2), 25 (SMTP).'),
  username: p.string().describe('The SMTP user name (authentication when set).'),
  password: p.string().secret().describe('The SMTP password (the OAuth2 access token with SMTP_OAUTH2); masked in logs and outputs.'),
  transportStrategy: p.enum(STRATEGIES).default('SMTPS')
    .describe('SMTPS: implicit TLS; SMTP_TLS: plain connection upgraded with STARTTLS, required and verified; SMTP: plain, upgraded with STARTTLS when the server offers it, without verifying its certificate (as Kestra); SMTP_OAUTH2: as SMTP_TLS, authenticating with an OAuth2 token.'),
  sessionTimeout: p.integer({ min: 1 }).default(10000).describe('Milliseconds allowed to connect, for the greeting and for each exchange with the server.'),
  caCertificate: p.string().describe('PEM certificate(s) of a certificate authority to trust besides the system\'s, for a server with a private or self-signed certificate (not a Kestra property: Kestra uses the JVM\'s trust store).'),
};

const messageProps = {
  from: p.string().required().describe('The sender address.'),
  to: p.string().required().describe('Recipient address(es) (RFC 2822), several separated by semicolons.'),
  cc: p.string().describe('Carbon-copy address(es), several separated by semicolons.'),
  subject: p.string().describe('The subject.'),
};

const attachmentProps = {
  attachments: p.objectList(fileProps).describe('Files attached to the message: a list of {uri, name, contentType}, or an expression rendering to one (`{{ inputs.files | toJson }}`).'),
  embeddedImages: p.objectList(fileProps).describe('Images embedded in the HTML body, referred to as `<img src="cid:<name>">`.'),
};

type Server = PropValues<typeof serverProps>;
interface Message {
  from: string; to: string; cc?: string; subject?: string; html?: string; text?: string;
  attachments?: MailFile[]; embeddedImages?: MailFile[];
}

const addresses = (v: string): string[] => v.split(';').map((a) => a.trim()).filter(Boolean);

async function storageFile(ctx: RunContext, f: MailFile, i: number, list: string, inline: boolean): Promise<Record<string, unknown>> {
  if (!f.uri.startsWith('kestra://')) throw new Error(`Property '${list}[${i}].uri' must be an internal-storage URI (kestra:///...)`);
  const content = await ctx.storage.stream(f.uri);
  return { filename: f.name, content, contentType: f.contentType, ...(inline ? { cid: f.name, contentDisposition: 'inline' } : {}) };
}

/** Sends one message; the files are streamed from internal storage while the message is written to the server. */
export async function sendMail(ctx: RunContext, server: Server, msg: Message): Promise<void> {
  const nodemailer = (await import('nodemailer')).default;
  const strategy = server.transportStrategy;
  const t = server.sessionTimeout;
  const verified = strategy !== 'SMTP' || server.caCertificate !== undefined;
  const auth = server.username === undefined ? undefined
    : strategy === 'SMTP_OAUTH2' ? { type: 'OAuth2' as const, user: server.username, accessToken: server.password ?? '' }
    : { user: server.username, pass: server.password ?? '' };
  const transport = nodemailer.createTransport({
    host: server.host, port: server.port ?? DEFAULT_PORT[strategy],
    secure: strategy === 'SMTPS', requireTLS: strategy === 'SMTP_TLS' || strategy === 'SMTP_OAUTH2',
    connectionTimeout: t, greetingTimeout: t, socketTimeout: t,
    tls: { ...(isIP(server.host) ? {} : { servername: server.host }), rejectUnauthorized: verified, ...(server.caCertificate ? { ca: server.caCertificate } : {}) },
    ...(auth ? { auth } : {}),
  });
  const opened: { destroy?(): void }[] = [];
  const files = async (list: MailFile[] | undefined, name: string, inline: boolean) => {
    const out: Record<string, unknown>[] = [];
    for (const [i, f] of (list ?? []).entries()) {
      const a = await storageFile(ctx, f, i, name, inline);
      opened.push(a.content as { destroy?(): void });
      out.push(a);
    }
    return out;
  };
  const onAbort = () => transport.close();
  ctx.signal.addEventListener('abort', onAbort, { once: true });
  try {
    const attachments = [...await files(msg.attachments, 'attachments', false), ...await files(msg.embeddedImages, 'embeddedImages', true)];
    ctx.logger.debug(`Sending an email to ${msg.to} through ${server.host} (${strategy})`);
    const info = await transport.sendMail({
      from: msg.from, to: addresses(msg.to), ...(msg.cc ? { cc: addresses(msg.cc) } : {}),
      ...(msg.subject !== undefined ? { subject: msg.subject } : {}),
      ...(msg.html !== undefined ? { html: msg.html } : {}), ...(msg.text !== undefined ? { text: msg.text } : {}),
      attachments: attachments as never,
    });
    ctx.logger.info(`Email sent to ${info.accepted.map(String).join(', ')}${info.rejected.length ? `; rejected: ${info.rejected.map(String).join(', ')}` : ''}`);
  } catch (err) {
    const e = err as Error & { responseCode?: number; code?: string };
    throw new Error(`Sending the email through ${server.host} failed: ${e.message}${e.code && !e.message.includes(e.code) ? ` (${e.code})` : ''}`);
  } finally {
    ctx.signal.removeEventListener('abort', onAbort);
    for (const s of opened) s.destroy?.();
    transport.close();
  }
}

const PLAIN_DEFAULT = 'Please view this email in a modern email client';

export const mailSend = definePlugin({
  type: 'notifications.mail.MailSend',
  title: 'Send an email',
  description: 'Sends an email through an SMTP server: HTML and/or plain text body, attachments and embedded images from '
    + 'internal storage (streamed). TLS as `transportStrategy` says (implicit TLS by default). A refusal of the server '
    + '(authentication, recipient) fails the task with its answer.',
  properties: {
    ...serverProps, ...messageProps,
    htmlTextContent: p.string().describe('The HTML body (email clients that support it show it rather than the plain text).'),
    plainTextContent: p.string().describe(`The plain-text body; default: "${PLAIN_DEFAULT}".`),
    ...attachmentProps,
  },
  examples: [{
    title: 'Email on a failed execution, with a report attached',
    code: `id: unreliable_flow
namespace: company.team
tasks:
  - id: export
    type: io.kestra.plugin.core.storage.Write
    content: "a,b\\n1,2\\n"
    extension: .csv
  - id: fail
    type: io.kestra.plugin.core.execution.Fail
errors:
  - id: send_email
    type: io.kestra.plugin.notifications.mail.MailSend
    host: mail.example.com
    port: 465
    username: "{{ secret('EMAIL_USERNAME') }}"
    password: "{{ secret('EMAIL_PASSWORD') }}"
    from: flows@example.com
    to: oncall@example.com
    subject: "Flow {{ flow.namespace }}.{{ flow.id }} failed"
    htmlTextContent: "Failure alert for execution <b>{{ execution.id }}</b>"
    attachments:
      - name: report.csv
        uri: "{{ outputs.export.uri }}"
        contentType: text/csv`,
  }],
  async run(ctx, props) {
    await sendMail(ctx, props, {
      from: props.from, to: props.to, cc: props.cc, subject: props.subject, html: props.htmlTextContent,
      text: props.plainTextContent ?? PLAIN_DEFAULT, attachments: props.attachments, embeddedImages: props.embeddedImages,
    });
    return { state: 'SUCCESS' };
  },
});

const esc = (s: string): string => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

/** The HTML and plain-text bodies of MailExecution (Kestra's mail-template, reduced to its content). */
export function mailExecutionBodies(s: ExecutionSummary): { html: string; text: string } {
  const e = s.execution;
  const rows: [string, string][] = [['Namespace', e.namespace], ['Flow', e.flowId], ['Execution', e.id], ['Status', e.state.current]];
  if (s.lastTask) rows.push(['Final task ID', s.lastTask.taskId]);
  for (const [k, v] of Object.entries(s.customFields ?? {})) rows.push([k, fieldText(v)]);
  const color = e.state.current === 'SUCCESS' ? 'green' : e.state.current === 'WARNING' ? 'orange' : 'red';
  const html = ['<!doctype html>', '<html><head><meta charset="utf-8"><title>', esc(`Flow [${e.namespace}] ${e.flowId} execution`), '</title></head>',
    '<body style="font-family: sans-serif; font-size: 14px">',
    `<p style="font-size: 16px">[${esc(e.namespace)}] ${esc(e.flowId)} ➛ <span style="color: ${color}">${esc(e.state.current)}</span></p>`,
    ...(s.customMessage !== undefined ? [`<p>${esc(s.customMessage)}</p>`] : []),
    `<p>${outcomeLine(s, (t) => `<code>${esc(t)}</code>`)}</p>`,
    ...(s.link ? [`<p><a href="${esc(s.link)}">See details</a></p>`] : []),
    ...rows.map(([k, v]) => `<p><strong>${esc(k)}:</strong> ${esc(v)}</p>`),
    '</body></html>'].join('\n');
  const text = [headline(s), ...(s.customMessage !== undefined ? [s.customMessage] : []), outcomeLine(s),
    ...(s.link ? [`Details: ${s.link}`] : []), '', ...rows.map(([k, v]) => `${k}: ${v}`)].join('\n');
  return { html, text };
}

export const mailExecution = definePlugin({
  type: 'notifications.mail.MailExecution',
  title: 'Send an email with the execution information',
  description: 'Sends an email (HTML and plain text) summarising an execution: namespace, flow, execution id, state, '
    + 'duration, the failed task (or the final one), and a link to the execution page when the `PUBLIC_URL` setting is '
    + 'set. By default the current execution; from a Flow trigger, set `executionId: "{{ trigger.executionId }}"`. The '
    + 'subject defaults to `[namespace] flow ➛ STATE`.',
  properties: { ...serverProps, ...messageProps, ...attachmentProps, ...executionProps },
  examples: [{
    title: 'Email the on-call team about failed executions',
    code: `id: failure_alert
namespace: company.team
tasks:
  - id: send_alert
    type: io.kestra.plugin.notifications.mail.MailExecution
    host: mail.example.com
    port: 465
    username: "{{ secret('EMAIL_USERNAME') }}"
    password: "{{ secret('EMAIL_PASSWORD') }}"
    from: flows@example.com
    to: oncall@example.com
    executionId: "{{ trigger.executionId }}"
triggers:
  - id: failed
    type: io.kestra.plugin.core.trigger.Flow
    conditions:
      - type: io.kestra.plugin.core.condition.ExecutionStatus
        in: [FAILED, WARNING]`,
  }],
  async run(ctx, props) {
    const summary = await executionSummary(ctx, props);
    const { html, text } = mailExecutionBodies(summary);
    await sendMail(ctx, props, {
      from: props.from, to: props.to, cc: props.cc, subject: props.subject ?? headline(summary), html, text,
      attachments: props.attachments, embeddedImages: props.embeddedImages,
    });
    return { state: 'SUCCESS' };
  },
});
