// MailSend and MailExecution end to end: flows run by the embedded service send through a real SMTP server (Debian's
// python3-aiosmtpd, started on a free loopback port) with STARTTLS or implicit TLS on a self-signed certificate made by
// the test, and AUTH; the received message is asserted as the server parsed it (headers, bodies, attachment bytes).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Execution } from '../../core/types.js';
import { startEmbedded, type Embedded } from '../../../test/support/embedded.js';
import { removeDir, selfSignedCert, startSmtp, type SmtpServer } from '../../../test/support/smtp.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');
const PASSWORD = 'sMtP-pa55-w0rd';
let cert: ReturnType<typeof selfSignedCert>;
let starttls: SmtpServer;
let implicit: SmtpServer;
let plain: SmtpServer;
let env: Embedded;

beforeAll(async () => {
  cert = selfSignedCert();
  [starttls, implicit, plain] = await Promise.all([
    startSmtp({ tls: { dir: cert.dir, require: true }, auth: `robot:${PASSWORD}` }),
    startSmtp({ tls: { dir: cert.dir, implicit: true } }),
    startSmtp(),
  ]);
  process.env.PUBLIC_URL = 'http://localhost:8080';
  env = await startEmbedded({ PATH: process.env.PATH, SECRET_SMTP_CA: b64(cert.cert), SECRET_SMTP_PASSWORD: b64(PASSWORD) });
}, 60_000);

afterAll(async () => {
  await env?.close();
  await Promise.all([starttls, implicit, plain].map((s) => s?.stop()));
  if (cert) removeDir(cert.dir);
  delete process.env.PUBLIC_URL;
});

async function run(yaml: string): Promise<Execution> {
  const flow = await env.createFlow(yaml);
  const created = await env.execute(flow.namespace, flow.id);
  return env.waitFor(created.id, (e) => ['SUCCESS', 'WARNING', 'FAILED', 'KILLED'].includes(e?.state?.current), 60_000);
}
const runOf = (e: Execution, id: string) => e.taskRunList.find((r) => r.taskId === id)!;
const logs = async (id: string) => ((await env.json(`/logs/${id}`)).body as { message: string }[]).map((l) => l.message).join('\n');

/** The server properties of a mail task, `extra` lines added, indented by `indent` spaces. */
const server = (s: SmtpServer, strategy: string, extra: string[] = [], indent = 4) =>
  [`host: 127.0.0.1`, `port: ${s.port}`, `transportStrategy: ${strategy}`, 'sessionTimeout: 20000', ...extra]
    .map((l) => ' '.repeat(indent) + l).join('\n');

describe('MailSend', () => {
  it('STARTTLS (verified against the given CA) with AUTH: headers, bodies, an attachment and an embedded image, bytes intact', async () => {
    const e = await run(`id: mail_starttls
namespace: company.team
tasks:
  - id: report
    type: io.kestra.plugin.core.storage.Write
    content: "id,name\\n1,Ada\\n2,Grace\\n"
    extension: .csv
  - id: logo
    type: io.kestra.plugin.core.storage.Write
    content: "PNG-bytes-é"
    extension: .png
  - id: send
    type: io.kestra.plugin.notifications.mail.MailSend
${server(starttls, 'SMTP_TLS', [`caCertificate: "{{ secret('SMTP_CA') }}"`, 'username: robot', `password: "{{ secret('SMTP_PASSWORD') }}"`])}
    from: Flows <flows@example.com>
    to: "a@example.com; b@example.com"
    cc: c@example.com
    subject: "Report of {{ flow.id }}"
    htmlTextContent: "<p>See <b>{{ execution.id }}</b></p><img src=\\"cid:logo.png\\">"
    plainTextContent: "See {{ execution.id }}"
    attachments:
      - { name: report.csv, uri: "{{ outputs.report.uri }}", contentType: text/csv }
    embeddedImages:
      - { name: logo.png, uri: "{{ outputs.logo.uri }}", contentType: image/png }
`);
    expect(runOf(e, 'send').state.current).toBe('SUCCESS');
    const m = starttls.messages.at(-1)!;
    expect(m).toMatchObject({ from: 'flows@example.com', to: ['a@example.com', 'b@example.com', 'c@example.com'], tls: true, auth: true });
    expect(m.headers).toMatchObject({ From: 'Flows <flows@example.com>', To: 'a@example.com, b@example.com', Cc: 'c@example.com', Subject: 'Report of mail_starttls' });
    expect(m.text?.trim()).toBe(`See ${e.id}`);
    expect(m.html).toContain(`<p>See <b>${e.id}</b></p>`);
    const csv = m.parts.find((p) => p.name === 'report.csv')!;
    expect(csv).toMatchObject({ type: 'text/csv', disposition: 'attachment' });
    expect(Buffer.from(csv.data, 'base64').toString('utf8')).toBe('id,name\n1,Ada\n2,Grace\n');
    const logo = m.parts.find((p) => p.name === 'logo.png')!;
    expect(logo).toMatchObject({ type: 'image/png', disposition: 'inline', cid: '<logo.png>' });
    expect(Buffer.from(logo.data, 'base64').toString('utf8')).toBe('PNG-bytes-é');
    expect(await logs(e.id)).not.toContain(PASSWORD);
  });

  it('implicit TLS (SMTPS); and plain SMTP with the default text body', async () => {
    const e = await run(`id: mail_tls_plain
namespace: company.team
tasks:
  - id: smtps
    type: io.kestra.plugin.notifications.mail.MailSend
${server(implicit, 'SMTPS', [`caCertificate: "{{ secret('SMTP_CA') }}"`])}
    from: flows@example.com
    to: ops@example.com
    subject: over TLS
    plainTextContent: hello
  - id: plain
    type: io.kestra.plugin.notifications.mail.MailSend
${server(plain, 'SMTP')}
    from: flows@example.com
    to: ops@example.com
    subject: plain
`);
    expect(e.state.current).toBe('SUCCESS');
    expect(implicit.messages.at(-1)).toMatchObject({ tls: true, headers: expect.objectContaining({ Subject: 'over TLS' }), text: expect.stringContaining('hello') });
    expect(plain.messages.at(-1)).toMatchObject({ tls: false, headers: expect.objectContaining({ Subject: 'plain' }) });
    expect(plain.messages.at(-1)!.text?.trim()).toBe('Please view this email in a modern email client');
  });

  it('fails on an untrusted certificate and on an attachment outside internal storage', async () => {
    const before = starttls.messages.length;
    const e = await run(`id: mail_refused
namespace: company.team
tasks:
  - id: parallel
    type: io.kestra.plugin.core.flow.Parallel
    tasks:
      - id: untrusted
        type: io.kestra.plugin.notifications.mail.MailSend
${server(starttls, 'SMTP_TLS', ['username: robot', `password: "{{ secret('SMTP_PASSWORD') }}"`], 8)}
        from: flows@example.com
        to: ops@example.com
      - id: host_file
        type: io.kestra.plugin.notifications.mail.MailSend
${server(plain, 'SMTP', [], 8)}
        from: flows@example.com
        to: ops@example.com
        attachments:
          - { name: passwd, uri: /etc/passwd }
`);
    expect(e.state.current).toBe('FAILED');
    for (const id of ['untrusted', 'host_file']) expect(runOf(e, id).state.current).toBe('FAILED');
    const text = await logs(e.id);
    expect(text).toMatch(/Sending the email through 127\.0\.0\.1 failed: .*(self[- ]signed|certificate)/i);
    expect(text).toContain("Property 'attachments[0].uri' must be an internal-storage URI (kestra:///...)");
    expect(starttls.messages.length).toBe(before);
    expect(text).not.toContain(PASSWORD);
  });
});

describe('MailExecution', () => {
  it('sends the summary of the execution: subject, failed task, link', async () => {
    const e = await run(`id: mail_summary
namespace: company.team
tasks:
  - { id: boom, type: io.kestra.plugin.core.execution.Fail, errorMessage: broken }
errors:
  - id: mail
    type: io.kestra.plugin.notifications.mail.MailExecution
${server(plain, 'SMTP')}
    from: flows@example.com
    to: ops@example.com
    customMessage: "Check <the> load"
`);
    expect(runOf(e, 'mail').state.current).toBe('SUCCESS');
    const m = plain.messages.at(-1)!;
    expect(m.headers.Subject).toBe('[company.team] mail_summary ➛ RUNNING');
    expect(m.html).toContain('Failed on task <code>boom</code> after ');
    expect(m.html).toContain('<p>Check &#60;the&#62; load</p>');
    expect(m.html).toContain(`href="http://localhost:8080/ui/executions/company.team/mail_summary/${e.id}"`);
    expect(m.text).toContain(`Execution: ${e.id}`);
    expect(m.text).toContain('Final task ID: boom');
  });
});
