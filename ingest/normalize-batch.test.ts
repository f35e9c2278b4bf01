import test from 'ava';
import fc from 'fast-check';
import { checkTimestamps, correctClockSkew, normalizePage, toBatchMessage } from './normalize-batch.ts';
import { IngestBatchSchema } from '../shared/contracts/ingest.ts';

test('hash routes are pages; anchors, route queries and trailing slashes are not', (t) => {
  t.is(normalizePage('/kb/#/payments'), '/kb#/payments');
  t.is(normalizePage('/kb#/payments/'), '/kb#/payments');
  t.is(normalizePage('/kb/#!/payments/refunds'), '/kb#!/payments/refunds');
  t.is(normalizePage('/kb/#/search?q=secret'), '/kb#/search', 'a query inside the route is dropped like any query');
  t.is(normalizePage('/kb?utm=x#/payments'), '/kb#/payments');
  t.is(normalizePage('/#/payments'), '/#/payments');
  t.is(normalizePage('https://help.example/kb/#/payments'), '/kb#/payments');
  t.is(normalizePage('/kb/#section-2'), '/kb', 'an anchor is a place on the page, not a page');
  t.is(normalizePage('/kb/#/'), '/kb', "an empty route is the app's root: the page itself");
  t.is(normalizePage('/kb/#!/'), '/kb');
  t.is(normalizePage('/kb/#'), '/kb');
  t.is(normalizePage('/kb/#//'), '/kb');
});

test('pages are paths: query, fragment, origin and trailing slash removed', (t) => {
  t.is(normalizePage('/checkout?step=2#pay'), '/checkout');
  t.is(normalizePage('https://shop.example/cart/'), '/cart');
  t.is(normalizePage('/'), '/');
  t.is(normalizePage('pricing'), '/pricing');
});

const batch = (ids: string[], extra: object = {}) =>
  IngestBatchSchema.parse({
    session_id: 's1',
    sent_at: 1_700_000_000_000,
    context: { device: 'desktop', viewport: { w: 1, h: 1 } },
    events: ids.map((id) => ({ id, type: 'page_view', ts: 1_700_000_000_000, page: '/a' })),
    ...extra,
  });

test('the batch id is derived from site and event ids (retries collide) unless the client sends one', (t) => {
  const ids = [crypto.randomUUID(), crypto.randomUUID()];
  const key = { orgId: crypto.randomUUID(), siteId: crypto.randomUUID() };
  const a = toBatchMessage(batch(ids), key, 1);
  const b = toBatchMessage(batch(ids), key, 2);
  t.is(a.message.batch_id, b.message.batch_id);
  t.not(a.message.batch_id, toBatchMessage(batch([ids[0]]), key, 1).message.batch_id);
  const mine = crypto.randomUUID();
  t.is(toBatchMessage(batch(ids, { batch_id: mine }), key, 1).message.batch_id, `${key.siteId}:${mine}`);
});

test('events repeated inside a batch are dropped and counted', (t) => {
  const id = crypto.randomUUID();
  const r = toBatchMessage(
    batch([id, id, crypto.randomUUID()]),
    { orgId: crypto.randomUUID(), siteId: crypto.randomUUID() },
    1,
  );
  t.is(r.message.events.length, 2);
  t.is(r.inBatchDuplicates, 1);
});

test('timestamps more than 1 h ahead or 30 days old are named per event', (t) => {
  const now = 1_700_000_000_000;
  const b = batch([crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()]);
  b.events[1].ts = now + 2 * 3600_000;
  b.events[2].ts = now - 31 * 86_400_000;
  t.deepEqual(
    checkTimestamps(b, now).map((p) => p.path),
    ['events[1].ts', 'events[2].ts'],
  );
});

test('clock skew: events move by the device clock error in whole minutes; latency and small drift move nothing', (t) => {
  const sent = 1_700_000_000_000;
  const fast = batch(['00000000-0000-4000-8000-000000000001']);
  // The device clock is an hour and 7 s fast; the request took 300 ms.
  const received = sent - 3_600_000 - 7_000 + 300;
  t.is(correctClockSkew(fast, received), -3_600_000);
  t.is(fast.events[0].ts, sent - 3_600_000);
  t.deepEqual(checkTimestamps(fast, received), [], 'an hour-fast device is no longer refused');
  // A retry a little later measures a slightly different error, yet gets the same correction: same stored identity.
  const retry = batch(['00000000-0000-4000-8000-000000000001']);
  t.is(correctClockSkew(retry, received + 1200), -3_600_000);
  t.is(retry.events[0].ts, fast.events[0].ts);
  const honest = batch(['00000000-0000-4000-8000-000000000002']);
  t.is(correctClockSkew(honest, sent + 25_000), 0);
  t.is(honest.events[0].ts, sent);
});

test('normalizing a page twice changes nothing, and no query survives', (t) => {
  const part = fc.stringMatching(/^[a-z0-9/#!?=._-]{0,30}$/);
  fc.assert(
    fc.property(part, part, (a, b) => {
      const once = normalizePage(`/${a}${b}`);
      return normalizePage(once) === once && !once.includes('?') && once.startsWith('/');
    }),
  );
  t.pass();
});
