import test from 'ava';
import fc from 'fast-check';
import { Webhook } from 'standardwebhooks';
import { eventBody, eventIdOf, MAX_EVENT_BYTES, signedHeaders, signingKey } from './webhook-event.ts';

test('property: any body signed with a whsec_ secret verifies with the standardwebhooks library', (t) => {
  fc.assert(
    fc.property(fc.uint8Array({ minLength: 24, maxLength: 64 }), fc.string({ maxLength: 300 }), (key, text) => {
      const secret = `whsec_${Buffer.from(key).toString('base64')}`;
      const body = JSON.stringify({ id: 'evt_1', text });
      const ts = Math.floor(Date.now() / 1000);
      const headers = signedHeaders(secret, 'evt_1', ts, body);
      new Webhook(secret).verify(body, headers);
      // A key made once signs exactly as the secret does.
      t.deepEqual(signedHeaders(signingKey(secret), 'evt_1', ts, body), headers);
      return headers['x-service-signature'] === headers['webhook-signature'];
    }),
    { numRuns: 100 },
  );
  // A secret a user chose (not whsec_ base64) signs with its bytes.
  const own = 'my-own-secret-0123456789';
  const h = signedHeaders(own, 'evt_2', Math.floor(Date.now() / 1000), '{}');
  t.notThrows(() => new Webhook(Buffer.from(own), { format: 'raw' }).verify('{}', h));
  t.notThrows(() =>
    new Webhook(Buffer.from(own), { format: 'raw' }).verify(
      '{}',
      signedHeaders(signingKey(own), 'evt_2', Number(h['webhook-timestamp']), '{}'),
    ),
  );
  t.throws(() => new Webhook(`whsec_${Buffer.alloc(24, 1).toString('base64')}`).verify('{}', h));
});

test('event ids are stable per notification and distinct between notifications', (t) => {
  t.is(eventIdOf('a'), eventIdOf('a'));
  t.not(eventIdOf('a'), eventIdOf('b'));
  t.regex(eventIdOf('x'), /^evt_[0-9a-f]{32}$/);
});

test('property: bodies stay under 20 KB however large or deep the data, and keep id, type, site_id', (t) => {
  fc.assert(
    fc.property(fc.jsonValue({ maxDepth: 6 }), fc.string({ minLength: 0, maxLength: 40_000 }), (v, big) => {
      const body = eventBody({
        id: 'evt_1',
        type: 'issue.created',
        timestamp: '2026-01-01T00:00:00.000Z',
        site_id: 's',
        data: { v, big, list: Array(2000).fill(big.slice(0, 20)) },
      });
      const parsed = JSON.parse(body);
      return (
        Buffer.byteLength(body) <= MAX_EVENT_BYTES &&
        parsed.id === 'evt_1' &&
        parsed.type === 'issue.created' &&
        parsed.site_id === 's'
      );
    }),
    { numRuns: 60 },
  );
  t.pass();
});
