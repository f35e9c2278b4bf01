/**
 * The SDK's transport, session and robustness in real headless Chromium: batching, the pagehide
 * beacon, retries that honour Retry-After, the bounded queue, sampling, session and context
 * fields, and a page that throws or breaks browser APIs without the SDK ever surfacing an error.
 */
import test, { type ExecutionContext } from 'ava';
import type { BrowserContext, Page } from 'playwright-core';
import { IngestBatchSchema } from '../../shared/contracts/ingest.ts';
import type { Received } from './testing/capture-server.ts';
import { limiter } from './testing/limit.ts';
import {
  closeEnv,
  newKey,
  openContext,
  settle,
  startEnv,
  type Env,
  type SdkStats,
  type SentEvent,
} from './testing/run-visit.ts';
import { Visitor } from './testing/visitor.ts';
import { seeded } from '../../shared/seeded-random.ts';

let env: Env;
const run = limiter(4);

test.before(async () => {
  env = await startEnv();
});

test.after.always(() => closeEnv(env));

interface Session {
  key: string;
  context: BrowserContext;
  page: Page;
  v: Visitor;
  pageErrors: string[];
  warnings: string[];
}

/** A fresh visitor whose pages load the SDK with `config`; the context is closed after `fn`. */
function withSdk(config: Record<string, unknown>, fn: (s: Session) => Promise<void>, init?: () => void): Promise<void> {
  return run(async () => {
    const key = newKey();
    const context = await openContext(env, key, config);
    if (init) await context.addInitScript(init);
    const pageErrors: string[] = [];
    const warnings: string[] = [];
    context.on('page', (p) => {
      p.on('pageerror', (e) => pageErrors.push(e.message));
      p.on('console', (m) => m.type() === 'warning' && warnings.push(m.text()));
    });
    try {
      const page = await context.newPage();
      await fn({ key, context, page, v: new Visitor(page, env.fixtures.url, seeded(3)), pageErrors, warnings });
    } finally {
      await context.close();
    }
  });
}

const F = <T>(page: Page, fn: string): Promise<T> => page.evaluate(`window.Friction.${fn}`) as Promise<T>;
const stats = (page: Page): Promise<SdkStats> => F<SdkStats>(page, 'stats()');
const posts = (key: string): Received[] => env.capture.received.filter((r) => r.key === key);
const customs = (events: SentEvent[]): SentEvent[] => events.filter((e) => e.type === 'custom');
function noInvalid(t: ExecutionContext, key: string): void {
  t.deepEqual(
    env.capture.invalid.filter((x) => x.key === key).map((x) => x.issues),
    [],
    'every batch matches IngestBatchSchema',
  );
}

test('events go in batches: at most 20, sent at once when full, the rest after the interval', async (t) => {
  const interval = 3000;
  await withSdk({ flushInterval: interval }, async ({ key, page, v }) => {
    const preflights = env.capture.preflights;
    await v.goto('/index.html');
    // The transport holds everything until the remote config is in, then sends what it holds at once, and keeps
    // sending whatever is queued until its queue is empty: events tracked while that page view is still in flight
    // (a busy machine) would go back to back. Wait until the page view is sent and answered.
    await settle(page);
    const before = posts(key).length;
    await page.evaluate(() => {
      for (let i = 0; i < 45; i++)
        (window as unknown as { Friction: { track(n: string, p: object): void } }).Friction.track('batched', { i });
    });
    await env.capture.waitFor(
      () => customs(env.capture.events(key)).length === 45,
      interval + 5000,
      '45 tracked events',
    );
    const batches = posts(key)
      .slice(before)
      .filter((r) => r.batch!.events.some((e) => e.name === 'batched'));
    const sizes = batches.map((r) => r.batch!.events.length);
    t.is(sizes.length, 3, `three batches (${sizes.join(', ')})`);
    t.deepEqual(sizes.slice(0, 2), [20, 20], 'full batches of 20 go as soon as they fill');
    t.true(
      batches[2].at - batches[1].at >= interval - 100,
      `the remainder waits for the flush interval (gaps ${batches[1].at - batches[0].at} ms, ${batches[2].at - batches[1].at} ms; types ${batches[2].batch!.events.map((e) => e.type).join(',')}; beacon ${!batches[2].viaHeader})`,
    );
    t.true(batches[1].at - batches[0].at < interval / 2, 'full batches do not wait for the interval');
    t.is(new Set(batches.map((r) => r.batch!.batch_id)).size, 3, 'each batch has its own batch_id');
    for (const r of batches) {
      t.regex(r.contentType, /^application\/json/);
      t.true(r.viaHeader, 'fetch sends the key in the Authorization header');
      t.is((r.raw as { key?: string }).key, undefined, 'and not in the body');
    }
    t.true(env.capture.preflights > preflights, 'the cross-origin POST went through a CORS preflight');
    noInvalid(t, key);
  });
});

test('pagehide hands the queue to sendBeacon: text/plain, key in the body, no header', async (t) => {
  await withSdk({ flushInterval: 60_000 }, async ({ key, page, v }) => {
    await v.goto('/index.html');
    await page.evaluate(() => {
      for (const n of ['one', 'two', 'three'])
        (window as unknown as { Friction: { track(n: string): void } }).Friction.track(n);
    });
    t.is(posts(key).length, 0, 'nothing sent before the interval');
    await v.follow('#to-help');
    await env.capture.waitFor(() => posts(key).some((r) => r.status === 202 && !r.viaHeader), 20_000, 'the beacon');
    const beacon = posts(key).find((r) => !r.viaHeader)!;
    t.regex(beacon.contentType, /^text\/plain/);
    t.is((beacon.raw as { key: string }).key, key);
    t.deepEqual(
      customs(beacon.batch!.events).map((e) => e.name),
      ['one', 'two', 'three'],
    );
    t.true(beacon.batch!.events.some((e) => e.type === 'page_view' && e.page === '/index.html'));
    t.true(IngestBatchSchema.safeParse(beacon.raw).success);
    noInvalid(t, key);
  });
});

test('retries after a network failure, a 429 and a 503, honouring Retry-After, with the same batch_id', async (t) => {
  await withSdk({ flushInterval: 60_000 }, async ({ key, page, v }) => {
    await v.goto('/index.html');
    env.capture.fail(key, { status: 0 }, { status: 429, retryAfter: '1' }, { status: 503, retryAfter: '1' });
    await page.evaluate(() => {
      const f = (window as unknown as { Friction: { track(n: string): void; flush(): void } }).Friction;
      f.track('retried');
      f.flush();
    });
    await env.capture.waitFor(() => posts(key).some((r) => r.status === 202), 15_000, 'the accepted retry');
    const tries = posts(key);
    t.deepEqual(
      tries.map((r) => r.status),
      [0, 429, 503, 202],
    );
    t.is(new Set(tries.map((r) => r.batch!.batch_id)).size, 1, 'every attempt reuses the batch_id');
    t.is(new Set(tries.map((r) => r.batch!.events.map((e) => e.id).join())).size, 1, 'and the same events');
    t.true(tries[1].at - tries[0].at >= 450, 'backoff after a network failure');
    t.true(tries[2].at - tries[1].at >= 1000, 'Retry-After: 1 after the 429');
    t.true(tries[3].at - tries[2].at >= 1000, 'Retry-After: 1 after the 503');
    const s = await settle(page);
    t.like(s, { retries: 3, dropped: 0, rejected: 0 });
    noInvalid(t, key);
  });
});

test('a batch refused with 400 is dropped, not retried, and later batches still go', async (t) => {
  await withSdk({ flushInterval: 60_000 }, async ({ key, page, v }) => {
    await v.goto('/index.html');
    env.capture.fail(key, { status: 400 });
    await F(page, `track('refused')`);
    await F(page, 'flush()');
    await env.capture.waitFor(() => posts(key).length === 1, 20_000, 'the refused batch');
    await F(page, `track('accepted')`);
    const s = await settle(page);
    t.deepEqual(
      posts(key).map((r) => r.status),
      [400, 202],
      'one attempt for the refused batch',
    );
    t.deepEqual(
      customs(env.capture.events(key)).map((e) => e.name),
      ['accepted'],
    );
    t.like(s, { rejected: 2, retries: 0 });
  });
});

test('the queue is bounded: the oldest events are dropped, counted and reported', async (t) => {
  await withSdk({ flushInterval: 60_000 }, async ({ key, page, v }) => {
    await v.goto('/index.html');
    // The first batch is held for ≥ 3 s (two refusals), ample time to overfill the queue behind it.
    env.capture.fail(key, { status: 503, retryAfter: '2' }, { status: 503, retryAfter: '1' });
    const track = (from: number, to: number): Promise<void> =>
      page.evaluate(
        ([a, b]) => {
          const f = (window as unknown as { Friction: { track(n: string, p: object): void; flush(): void } }).Friction;
          for (let i = a; i < b; i++) f.track('q', { i });
          f.flush();
        },
        [from, to],
      );
    await track(0, 30);
    await env.capture.waitFor(() => posts(key).some((r) => r.status === 503), 20_000, 'the first batch to be refused');
    // Batch 1 (page_view + q0..q18) waits out Retry-After; q19..q29 queue behind it, then 300 more.
    await track(30, 330);
    const mid = await stats(page);
    t.like(mid, { queued: 200, dropped: 111 }, 'the queue holds 200; 111 were dropped');
    const s = await settle(page);
    const events = env.capture.events(key);
    const kept = customs(events)
      .filter((e) => e.name === 'q')
      .map((e) => e.meta!.i as number);
    const want = [...Array.from({ length: 19 }, (_, i) => i), ...Array.from({ length: 200 }, (_, i) => 130 + i)];
    t.deepEqual(kept, want, 'the oldest queued events were the ones dropped');
    t.like(
      customs(events).find((e) => e.name === 'sdk_queue_dropped'),
      { value: 111 },
      'the drop count reaches the service',
    );
    t.like(s, { dropped: 111, retries: 2 });
    noInvalid(t, key);
  });
});

test('sampling: a session outside sampleRate records nothing; one inside records', async (t) => {
  const keys: Record<string, string> = {};
  await Promise.all(
    (
      [
        [0, 'out'],
        [1, 'in'],
      ] as const
    ).map(([rate, label]) =>
      withSdk({ flushInterval: 250, sampleRate: rate }, async ({ key, page, v }) => {
        keys[label] = key;
        await v.goto('/shop.html');
        await F(page, `track('sampled')`);
        await v.click('#wishlist', { times: 4, gap: [60, 120] });
        t.is((await stats(page)).sampled, label === 'in', `sampleRate ${rate}`);
        await F(page, 'flush()');
        await v.follow('#home');
        if (label === 'in') {
          await settle(page);
          const sent = (): SentEvent[] => env.capture.events(key);
          await env.capture.waitFor(
            () =>
              sent().filter((e) => e.type === 'page_view').length === 2 &&
              sent().some((e) => e.signal === 'rage_click'),
            20_000,
            'the visit',
          );
        }
      }),
    ),
  );
  t.true(posts(keys.in).length > 0);
  t.is(posts(keys.out).length, 0, 'the sampled-out session sent nothing, not even a page view');
});

test('one session id across pages, renewed after 30 idle minutes; identify sets context.anonymous_id', async (t) => {
  await withSdk({ flushInterval: 250 }, async ({ key, page, v, warnings }) => {
    await v.goto('/index.html');
    await F(page, `identify('anon-42')`);
    await F(page, `identify('walker@example.org')`);
    await settle(page);
    await v.follow('#to-help');
    await settle(page);
    const [a, b] = env.capture.accepted(key);
    t.is(a.session_id, b.session_id, 'the same session on the next page');
    t.is(b.context.anonymous_id, 'anon-42', 'identify survives the page change');
    t.true(
      warnings.some((w) => w.includes('identify')),
      'an email is refused with a warning',
    );
    // 31 minutes without activity: the next page starts a new session, keeping the anonymous id.
    await page.evaluate(() => {
      const s = JSON.parse(sessionStorage.getItem('friction.session')!);
      s.l -= 31 * 60 * 1000;
      sessionStorage.setItem('friction.session', JSON.stringify(s));
    });
    await v.follow('#to-faq');
    await settle(page);
    const c = env.capture.accepted(key).at(-1)!;
    t.not(c.session_id, a.session_id, 'a new session after the idle timeout');
    t.is(c.context.anonymous_id, 'anon-42');
    noInvalid(t, key);
  });
});

test('context: environment, app version, device, viewport, source; no query strings anywhere', async (t) => {
  await withSdk({ flushInterval: 250, environment: 'staging', appVersion: '2.3.4' }, async ({ key, page }) => {
    await page.goto(`${env.fixtures.url}/help.html?utm_source=newsletter&token=s3cr3t#top`, {
      referer: 'https://news.example/post?id=7',
    });
    await page.waitForFunction(() => 'Friction' in window);
    await settle(page);
    const [b] = env.capture.accepted(key);
    t.like(b.context, {
      environment: 'staging',
      app_version: '2.3.4',
      device: 'desktop',
      viewport: { w: 1280, h: 720 },
      source: 'newsletter',
    });
    t.is(b.events[0].page, '/help.html');
    t.false(JSON.stringify(posts(key).map((r) => r.raw)).includes('s3cr3t'), 'the query string is never sent');
    t.false((b.context.referrer ?? '').includes('?'));
  });
  const key = newKey();
  const context = await openContext(env, key, { flushInterval: 250 }, false, {
    viewport: { width: 390, height: 844 },
    isMobile: true,
    hasTouch: true,
  });
  try {
    const page = await context.newPage();
    await page.goto(`${env.fixtures.url}/index.html`);
    await page.waitForFunction(() => 'Friction' in window);
    await settle(page);
    t.is(env.capture.accepted(key)[0].context.device, 'mobile', 'a touch phone is a mobile device');
  } finally {
    await context.close();
  }
});

test('storage denied and sendBeacon broken: the SDK degrades quietly and still delivers', async (t) => {
  await withSdk(
    { flushInterval: 60_000 },
    async ({ key, page, v, pageErrors }) => {
      await v.goto('/index.html');
      await F(page, `track('before-leaving')`);
      await v.follow('#to-help');
      await env.capture.waitFor(() => customs(env.capture.events(key)).length === 1, 20_000, 'the keepalive fallback');
      const r = posts(key)[0];
      t.false(r.viaHeader, 'the fallback carries the key in the body');
      t.is((await stats(page)).errors, 0, 'handled, not merely caught');
      t.deepEqual(pageErrors, []);
    },
    () => {
      Object.defineProperty(window, 'sessionStorage', {
        get() {
          throw new DOMException('denied', 'SecurityError');
        },
      });
      navigator.sendBeacon = () => {
        throw new Error('beacon broken');
      };
    },
  );
});

/**
 * The shop, broken first by `breakPage` (run in the page before its own scripts), and one click on its dead
 * #wishlist: detection and the SDK's error handling both run; `fn` checks what followed.
 */
const deadClickOnBrokenShop = (breakPage: () => void, fn: (s: Session) => Promise<void>): Promise<void> =>
  withSdk(
    { flushInterval: 250 },
    async (s) => {
      await s.v.goto('/shop.html');
      await s.v.click('#wishlist');
      await fn(s);
    },
    breakPage,
  );

test('a page handler that throws on every click does not stop detection, and only its own error shows', async (t) => {
  await deadClickOnBrokenShop(
    () => {
      document.addEventListener(
        'click',
        () => {
          throw new Error('host handler failed');
        },
        true,
      );
    },
    async ({ key, page, pageErrors }) => {
      const s = await settle(page);
      const signals = env.capture.events(key).filter((e) => e.type === 'signal');
      t.deepEqual(signals.map((e) => `${e.signal} ${e.selector}`).sort(), [
        'dead_click #wishlist',
        'error_encounter #wishlist',
      ]);
      t.like(
        signals.find((e) => e.signal === 'error_encounter'),
        { meta: { kind: 'exception' } },
        "the page's error is reported as friction",
      );
      t.deepEqual(pageErrors, ['host handler failed'], "the page's own error, once, and nothing from the SDK");
      t.is(s.errors, 0);
    },
  );
});

test('browser APIs the SDK relies on, broken: contained inside the SDK, never a page error', async (t) => {
  await deadClickOnBrokenShop(
    () => {
      // Things only the SDK uses (Playwright's own injected script needs MutationObserver and layout).
      performance.getEntriesByType = () => {
        throw new Error('no timeline');
      };
      delete (CSS as { escape?: unknown }).escape;
      document.createTreeWalker = () => {
        throw new Error('no walkers');
      };
    },
    async ({ key, page, pageErrors }) => {
      await F(page, `track('still-working')`);
      const s = await settle(page);
      t.true(s.errors > 0, 'the failures were caught inside the SDK');
      t.deepEqual(pageErrors, []);
      const events = env.capture.events(key);
      t.true(
        customs(events).some((e) => e.name === 'still-working'),
        'the rest of the SDK still works',
      );
      t.like(
        events.find((e) => e.signal === 'dead_click'),
        { selector: undefined, label: undefined },
        'a signal loses only the broken parts',
      );
      noInvalid(t, key);
    },
  );
});

test('public API calls with bad arguments never throw', async (t) => {
  await withSdk({ flushInterval: 250 }, async ({ key, page, v, pageErrors, warnings }) => {
    await v.goto('/index.html');
    const results = await page.evaluate(() => {
      const f = (window as unknown as { Friction: Record<string, (...a: unknown[]) => unknown> }).Friction;
      const circular: Record<string, unknown> = { a: 1 };
      circular.self = circular;
      const hostile = {
        get boom(): never {
          throw new Error('getter');
        },
      };
      const calls: [string, unknown[]][] = [
        ['track', []],
        ['track', [42]],
        ['track', ['circular', circular]],
        ['track', ['hostile', hostile]],
        ['track', ['nested', { ok: 1, deep: { x: 1 }, fn() {}, list: [1, 2], long: 'x'.repeat(3000) }]],
        ['conversion', ['5']],
        ['conversion', [-1]],
        ['conversion', [19.99, { name: 'upgrade', plan: 'pro' }]],
        ['identify', [{}]],
        ['init', [{ key: 'svc_pub_again', endpoint: 'http://127.0.0.1:1' }]],
        ['init', [null]],
        ['flush', []],
      ];
      return calls.map(([name, args]) => {
        try {
          return { name, ok: true, value: f[name](...args) };
        } catch (e) {
          return { name, ok: false, value: String(e) };
        }
      });
    });
    t.true(
      results.every((r) => r.ok),
      JSON.stringify(results.filter((r) => !r.ok)),
    );
    t.is(results.find((r) => r.name === 'init')!.value, false, 'a second init is refused');
    await settle(page);
    const events = env.capture.events(key);
    t.like(
      customs(events).find((e) => e.name === 'circular'),
      { meta: { a: 1 } },
      'cycles are dropped, not serialized',
    );
    t.like(
      customs(events).find((e) => e.name === 'nested'),
      { meta: { ok: 1, long: 'x'.repeat(256) } },
    );
    t.is(customs(events).find((e) => e.name === 'nested')!.meta!.deep, undefined);
    const conversions = events.filter((e) => e.type === 'conversion');
    t.deepEqual(
      conversions.map((e) => e.value),
      [undefined, undefined, 19.99],
      'only a valid amount is sent',
    );
    t.is(conversions[2].name, 'upgrade');
    t.deepEqual(pageErrors, []);
    t.true(warnings.length > 0, 'misuse is explained on the console');
    noInvalid(t, key);
  });
});

test('fetch, XHR, history and window.open behave for the page exactly as without the SDK', async (t) => {
  const probe = async (page: Page) =>
    page.evaluate(async () => {
      const r: Record<string, unknown> = {};
      try {
        history.pushState(null, '', 'https://elsewhere.example/x');
        r.push = 'allowed';
      } catch (e) {
        r.push = (e as Error).name;
      }
      history.pushState({ n: 1 }, '', '/moved.html');
      r.pushed = [location.pathname, history.state];
      history.back();
      r.fetchBad = await fetch('http://127.0.0.1:1/').then(
        () => 'ok',
        (e: Error) => e.name,
      );
      r.fetchOk = await fetch('/site.css').then((x) => x.status);
      const xhr = new XMLHttpRequest();
      xhr.open('GET', '/site.css', false);
      xhr.send();
      r.xhr = xhr.status;
      const w = window.open('about:blank');
      r.open = !!w;
      w?.close();
      return r;
    });
  const bare = await env.browser.newPage();
  await bare.goto(`${env.fixtures.url}/index.html`);
  const without = await probe(bare);
  await bare.close();
  await withSdk({ flushInterval: 250 }, async ({ page, v, pageErrors }) => {
    await v.goto('/index.html');
    t.deepEqual(await probe(page), without);
    t.deepEqual(without, {
      push: 'SecurityError',
      pushed: ['/moved.html', { n: 1 }],
      fetchBad: 'TypeError',
      fetchOk: 200,
      xhr: 200,
      open: true,
    });
    t.deepEqual(pageErrors, []);
  });
});
