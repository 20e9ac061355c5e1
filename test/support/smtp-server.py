# Test support: a real SMTP server (Debian's python3-aiosmtpd) for the mail tests. Prints "READY" once listening, then
# one JSON line per message received: envelope, whether it came over TLS, headers, text/html bodies and every attachment (name, type, content
# id, base64 bytes). Options: --port, --cert/--key (PEM: STARTTLS offered, or implicit TLS with --implicit-tls),
# --require-tls, --auth user:password (AUTH PLAIN/LOGIN required).
import argparse, asyncio, base64, email, email.policy, json, ssl, sys
from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

p = argparse.ArgumentParser()
p.add_argument('--port', type=int, required=True)
p.add_argument('--cert'); p.add_argument('--key')
p.add_argument('--implicit-tls', action='store_true'); p.add_argument('--require-tls', action='store_true')
p.add_argument('--auth')
a = p.parse_args()

class Handler:
    async def handle_DATA(self, server, session, envelope):
        msg = email.message_from_bytes(envelope.content, policy=email.policy.default)
        out = {'from': envelope.mail_from, 'to': envelope.rcpt_tos, 'tls': session.ssl is not None or a.implicit_tls,
               'auth': session.authenticated, 'headers': {k: str(v) for k, v in msg.items()}, 'text': None, 'html': None, 'parts': []}
        for part in msg.walk():
            if part.is_multipart(): continue
            ctype = part.get_content_type()
            disp = part.get_content_disposition()
            if disp is None and ctype == 'text/plain' and out['text'] is None: out['text'] = part.get_content(); continue
            if disp is None and ctype == 'text/html' and out['html'] is None: out['html'] = part.get_content(); continue
            out['parts'].append({'name': part.get_filename(), 'type': ctype, 'disposition': disp, 'cid': part.get('Content-ID'),
                                 'data': base64.b64encode(part.get_payload(decode=True) or b'').decode()})
        print(json.dumps(out), flush=True)
        return '250 Message accepted'

def authenticator(server, session, envelope, mechanism, auth_data):
    user, pw = a.auth.split(':', 1)
    ok = isinstance(auth_data, LoginPassword) and auth_data.login.decode() == user and auth_data.password.decode() == pw
    return AuthResult(success=ok)

ctx = None
if a.cert:
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH); ctx.load_cert_chain(a.cert, a.key)
kw = {'hostname': '127.0.0.1', 'port': a.port}
if a.implicit_tls: kw['ssl_context'] = ctx
elif ctx: kw['tls_context'] = ctx; kw['require_starttls'] = a.require_tls
if a.auth: kw.update(authenticator=authenticator, auth_required=True, auth_require_tls=False)
c = Controller(Handler(), **kw)
c.start()
print('READY', flush=True)
try:
    sys.stdin.read()  # until the test closes stdin (or kills the process)
finally:
    c.stop()
