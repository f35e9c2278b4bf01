import test from 'ava';
import { captureUrl, decide, quotaDay, REFRESH_AFTER_MS, RETRY_FAILED_AFTER_MS } from './decide.ts';
import { chromiumArgs, screenshotsEnabled } from './capturer.ts';

const now = new Date('2026-11-23T12:00:00Z');
const row = (
  failure: string | null,
  ageMs: number,
  urls: { source_url: string | null; site_url: string | null } = {
    source_url: 'https://shop.example',
    site_url: 'https://shop.example',
  },
) => ({
  page: '/a',
  device: 'desktop',
  width: 1280,
  height: 800,
  failure,
  captured_at: new Date(now.getTime() - ageMs),
  ...urls,
});

test('decide: cached=1 never queues; off answers disabled; missing queues', (t) => {
  const missing = (cached: boolean, enabled: boolean) => decide(undefined, { cached, enabled, now });
  t.deepEqual(missing(true, true), { answer: 'null', reason: 'not_captured', queue: false });
  t.deepEqual(missing(false, false), { answer: 'null', reason: 'disabled', queue: false });
  t.deepEqual(missing(false, true), { answer: 'null', reason: 'capturing', queue: true });
  t.deepEqual(missing(true, false), { answer: 'null', reason: 'not_captured', queue: false });
});

test('decide: a stored capture is answered, refreshed only when a day old and not cached', (t) => {
  t.deepEqual(decide(row(null, 1000), { cached: false, enabled: true, now }), { answer: 'stored', queue: false });
  t.deepEqual(decide(row(null, REFRESH_AFTER_MS), { cached: false, enabled: true, now }), {
    answer: 'stored',
    queue: true,
  });
  t.deepEqual(decide(row(null, REFRESH_AFTER_MS), { cached: true, enabled: true, now }), {
    answer: 'stored',
    queue: false,
  });
  t.deepEqual(decide(row(null, REFRESH_AFTER_MS), { cached: false, enabled: false, now }), {
    answer: 'stored',
    queue: false,
  });
});

test('decide: a failure is answered with its reason and retried after an hour', (t) => {
  t.deepEqual(decide(row('refused', 1000), { cached: false, enabled: true, now }), {
    answer: 'null',
    reason: 'refused',
    queue: false,
  });
  t.deepEqual(decide(row('render_failed', RETRY_FAILED_AFTER_MS), { cached: false, enabled: true, now }), {
    answer: 'null',
    reason: 'render_failed',
    queue: true,
  });
  t.deepEqual(decide(row('render_failed', RETRY_FAILED_AFTER_MS), { cached: true, enabled: true, now }), {
    answer: 'null',
    reason: 'render_failed',
    queue: false,
  });
});

test("decide: a failure is retried at once when the site's URL changed since (not when cached=1)", (t) => {
  const moved = { source_url: 'http://localhost:3000', site_url: 'https://shop.example' };
  t.deepEqual(decide(row('render_failed', 1000, moved), { cached: false, enabled: true, now }), {
    answer: 'null',
    reason: 'render_failed',
    queue: true,
  });
  t.deepEqual(decide(row('refused', 1000, moved), { cached: false, enabled: true, now }), {
    answer: 'null',
    reason: 'refused',
    queue: true,
  });
  t.deepEqual(decide(row('render_failed', 1000, moved), { cached: true, enabled: true, now }), {
    answer: 'null',
    reason: 'render_failed',
    queue: false,
  });
  // A row from before the source URL was kept: retried once, after which it carries its URL.
  t.deepEqual(
    decide(row('render_failed', 1000, { source_url: null, site_url: 'https://shop.example' }), {
      cached: false,
      enabled: true,
      now,
    }).queue,
    true,
  );
  // A good capture is not retaken for a URL change alone: it is refreshed daily.
  t.deepEqual(decide(row(null, 1000, moved), { cached: false, enabled: true, now }), {
    answer: 'stored',
    queue: false,
  });
});

test("captureUrl keeps the site URL's path prefix and drops its query", (t) => {
  t.is(captureUrl('https://shop.example', '/checkout'), 'https://shop.example/checkout');
  t.is(captureUrl('https://shop.example/', '/checkout'), 'https://shop.example/checkout');
  t.is(captureUrl('https://shop.example/store/?x=1', '/cart'), 'https://shop.example/store/cart');
  t.is(captureUrl('http://127.0.0.1:8080', 'a'), 'http://127.0.0.1:8080/a');
  t.is(quotaDay(now), '2026-11-23');
});

test('screenshotsEnabled: off never; auto only when the executable exists', (t) => {
  t.false(screenshotsEnabled({ SCREENSHOTS: 'off', CHROMIUM_PATH: process.execPath }));
  t.false(screenshotsEnabled({ SCREENSHOTS: 'auto', CHROMIUM_PATH: '/nonexistent/chromium' }));
  t.true(screenshotsEnabled({ SCREENSHOTS: 'auto', CHROMIUM_PATH: process.execPath }));
});

test('chromiumArgs: every connection through the egress proxy, loopback included', (t) => {
  const args = chromiumArgs(4567);
  t.true(args.includes('--proxy-server=http://127.0.0.1:4567'));
  t.true(args.includes('--proxy-bypass-list=<-loopback>'));
  t.true(args.includes('--force-webrtc-ip-handling-policy=disable_non_proxied_udp'), 'no WebRTC UDP around the proxy');
});
