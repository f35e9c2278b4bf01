import test from 'ava';
import fc from 'fast-check';
import { REDACTED, redactSecrets, urlCredentialProblem } from './redact.ts';

test('URLs with user:password or a token-named query parameter are refused; plain ones pass', (t) => {
  t.truthy(urlCredentialProblem('https://user:pass@hooks.example/x'));
  t.truthy(urlCredentialProblem('https://user@hooks.example/x'));
  t.truthy(urlCredentialProblem('https://hooks.example/x?token=abc'));
  t.truthy(urlCredentialProblem('https://hooks.example/x?a=1&API_KEY=abc'));
  t.is(urlCredentialProblem('https://hooks.example/x?event=alert&page=2'), null);
  t.is(urlCredentialProblem('https://shop.example'), null);
});

test('the audit redaction removes secrets by key, by URL shape and by value shape, and keeps the rest', (t) => {
  const summary = {
    url: 'https://user:hunter2@hooks.example/path?token=abc&x=1',
    changes: { url: { from: 'https://a:b@old.example/', to: 'https://new.example/?api_key=zzz' } },
    signing_secret: 'whsec_abcdef',
    own_secret: true,
    note: 'made with svc_sec_ABCDEFGH12345678 and inv_0123456789abcdef0123',
    secrets: ['bot_token'],
    count: 3,
  };
  const r = redactSecrets(summary);
  const text = JSON.stringify(r);
  for (const leaked of ['hunter2', 'abc&', 'zzz', 'whsec_abcdef', 'svc_sec_ABCDEFGH', 'inv_0123', ':b@'])
    t.false(text.includes(leaked), leaked);
  t.is(r.signing_secret, REDACTED);
  t.true(r.own_secret);
  t.deepEqual(r.secrets, ['bot_token']);
  t.is(r.count, 3);
  t.true(r.url.includes('x=1'));
  t.is(r.changes.url.from, `https://${REDACTED}@old.example/`);
});

test("property: a password placed in a URL's userinfo never survives redaction", (t) => {
  fc.assert(
    fc.property(fc.stringMatching(/^[A-Za-z0-9]{6,20}$/), fc.stringMatching(/^[a-z]{1,10}$/), (pw, user) => {
      const out = JSON.stringify(redactSecrets({ nested: [{ u: `https://${user}:${pw}@h.example/p` }] }));
      return !out.includes(`:${pw}@`);
    }),
  );
  t.pass();
});
