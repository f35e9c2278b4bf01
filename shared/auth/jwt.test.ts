import test from 'ava';
import { createHmac, randomBytes } from 'node:crypto';
import { looksLikeJwt, signUserToken, verifyUserToken } from './jwt.ts';

const key = randomBytes(32);
const user = {
  userId: '3f1c1b8e-1d7a-4f3e-9a57-0d1c7b2a9e10',
  orgId: '6b0e2f44-8c1d-4e2b-a0d9-5f7e3c1b2a40',
  sessionId: '0b6f7c2e-3a4d-4e5f-8a9b-1c2d3e4f5a6b',
};
const b64 = (v: unknown) => Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');
const hs256 = (input: string, k = key) => createHmac('sha256', k).update(input).digest('base64url');

test('a signed token verifies to its claims until it expires', (t) => {
  const now = Date.UTC(2026, 0, 1);
  const { token, expiresAt } = signUserToken(key, user, 3600, now);
  t.is(expiresAt.getTime(), now + 3600_000);
  const claims = verifyUserToken(key, token, now + 3599_000);
  t.is(claims?.sub, user.userId);
  t.is(claims?.org, user.orgId);
  t.is(verifyUserToken(key, token, now + 3600_000), null, 'expired at exp: no leeway');
  t.true(looksLikeJwt(token));
  t.false(looksLikeJwt('svc_sec_abc'));
  t.is(
    signUserToken(key, { ...user, notAfter: new Date(now + 60_000) }, 3600, now).expiresAt.getTime(),
    now + 60_000,
    'never past its session',
  );
  const noSid = b64({
    sub: user.userId,
    org: user.orgId,
    iat: Math.floor(now / 1000),
    exp: Math.floor(now / 1000) + 600,
    iss: 'friction',
  });
  const h = b64({ alg: 'HS256', typ: 'JWT' });
  t.is(
    verifyUserToken(key, `${h}.${noSid}.${hs256(`${h}.${noSid}`)}`, now),
    null,
    'a token without a session (made before sessions existed) is refused',
  );
});

test('alg none, other algorithms, wrong keys, tampered payloads and garbage are refused', (t) => {
  const now = Date.now();
  const claims = {
    sub: user.userId,
    org: user.orgId,
    sid: user.sessionId,
    iat: Math.floor(now / 1000),
    exp: Math.floor(now / 1000) + 600,
    iss: 'friction',
  };
  const body = b64(claims);
  const none = `${b64({ alg: 'none', typ: 'JWT' })}.${body}.`;
  t.is(verifyUserToken(key, none, now), null, 'alg none, empty signature');
  t.is(
    verifyUserToken(key, `${b64({ alg: 'none' })}.${body}.${hs256(`${b64({ alg: 'none' })}.${body}`)}`, now),
    null,
    'alg none, even with a valid MAC',
  );
  const hs512Header = b64({ alg: 'HS512', typ: 'JWT' });
  t.is(
    verifyUserToken(key, `${hs512Header}.${body}.${hs256(`${hs512Header}.${body}`)}`, now),
    null,
    'another algorithm',
  );
  const header = b64({ alg: 'HS256', typ: 'JWT' });
  t.truthy(
    verifyUserToken(key, `${header}.${body}.${hs256(`${header}.${body}`)}`, now),
    'the hand-made control token is valid',
  );
  t.is(
    verifyUserToken(key, `${header}.${body}.${hs256(`${header}.${body}`, randomBytes(32))}`, now),
    null,
    'signed with another key',
  );
  const forged = b64({ ...claims, org: '00000000-0000-4000-8000-000000000000' });
  t.is(
    verifyUserToken(key, `${header}.${forged}.${hs256(`${header}.${body}`)}`, now),
    null,
    'payload changed after signing',
  );
  const noExp = b64({ sub: user.userId, org: user.orgId, sid: user.sessionId, iat: claims.iat, iss: 'friction' });
  t.is(verifyUserToken(key, `${header}.${noExp}.${hs256(`${header}.${noExp}`)}`, now), null, 'exp is required');
  for (const junk of ['', 'a.b', 'a.b.c.d', `${header}.${body}`, `${header}.${body}.!!`, 'svc_sec_x'])
    t.is(verifyUserToken(key, junk, now), null, junk);
});
