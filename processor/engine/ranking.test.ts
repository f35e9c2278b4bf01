import test from 'ava';
import { signalDefinition } from '../../shared/domain/signal-catalog.ts';
import { commitClusterUpdate, createClusterState, foldSignals, getCluster } from './cluster-state.ts';
import { decideIssue } from './clustering.ts';
import type { EngineEvent } from './events.ts';
import { T0, sig, view } from './fixtures.test-support.ts';
import { recomputeSite, snapshotFromState, type SiteSnapshot } from './recompute.ts';
import { HOUR_MS } from './time.ts';
import { commitWindowUpdate, createWindowState, foldEvents } from './windows.ts';

/**
 * A scripted day of traffic with known friction, through the incremental path:
 * - /checkout: 120 sessions; the "Pay now" button is broken: 45 sessions rage-click it, 30 dead-click it.
 * - /signup: 80 sessions; 25 try the disabled "Create account" submit.
 * - /blog: 2000 sessions, healthy, with 16 stray dead clicks scattered over 7 different elements.
 * - /lonely: a single session with a single rage click.
 */

/** Deterministic pseudo-random numbers (LCG), so the script is the same on every run. */
function rng(seed: number): () => number {
  let x = seed;
  return () => {
    x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
    return x / 2 ** 32;
  };
}

const SITE = 'shop';
const PAY = 'main > form#payment > button#pay-now';
const SUBMIT = 'form#signup > button[type=submit]';

function script(): EngineEvent[] {
  const r = rng(7);
  const at = (): number => T0 - Math.floor(r() * 20 * HOUR_MS);
  const out: EngineEvent[] = [];
  const on = { siteId: SITE };
  /** `n` sessions `ses_<name>_<i>`, each viewing `page` at a random time of the last 20 hours, then `then` adds its signals. */
  const visits = (name: string, page: string, n: number, then: (i: number, s: string, t: number) => void) => {
    for (let i = 0; i < n; i++) {
      const s = `ses_${name}_${i}`;
      const t = at();
      out.push(view(s, page, t, on));
      then(i, s, t);
    }
  };
  visits('checkout', '/checkout', 120, (i, s, t) => {
    if (i < 45)
      for (let k = 0; k < 2 + (i % 2); k++)
        out.push(sig(s, '/checkout', 'rage_click', t + 1000 + k, { ...on, selector: PAY, label: 'Pay now' }));
    if (i >= 30 && i < 60)
      out.push(sig(s, '/checkout', 'dead_click', t + 500, { ...on, selector: PAY, label: 'Pay now' }));
  });
  visits('signup', '/signup', 80, (i, s, t) => {
    if (i < 25)
      for (let k = 0; k < 1 + (i % 2); k++)
        out.push(
          sig(s, '/signup', 'disabled_element_attempt', t + 2000 + k, {
            ...on,
            selector: SUBMIT,
            label: 'Create account',
          }),
        );
  });
  const stray = [
    'article h2#intro',
    'article img.hero',
    'footer span.copyright',
    'aside div.author',
    'article blockquote',
    'nav span.logo',
    'article figure',
  ];
  let strays = 0;
  visits('blog', '/blog', 2000, (i, s, t) => {
    if (i % 133 === 0)
      out.push(sig(s, '/blog', 'dead_click', t + 700, { ...on, selector: stray[strays++ % stray.length] }));
  });
  out.push(view('ses_lonely', '/lonely', T0 - HOUR_MS, on));
  out.push(
    sig('ses_lonely', '/lonely', 'rage_click', T0 - HOUR_MS + 500, { ...on, selector: 'a.promo', label: 'Promo' }),
  );
  // Arrival order is not event order: shuffle deterministically.
  return out
    .map((e) => ({ e, k: r() }))
    .sort((a, b) => a.k - b.k)
    .map(({ e }) => e);
}

function runIncremental(events: readonly EngineEvent[]): {
  snapshot: SiteSnapshot;
  clusters: ReturnType<typeof createClusterState>;
} {
  const windows = createWindowState();
  const clusters = createClusterState();
  for (let i = 0; i < events.length; i += 97) {
    const batch = events.slice(i, i + 97);
    commitWindowUpdate(windows, foldEvents(windows, batch));
    commitClusterUpdate(clusters, foldSignals(clusters, batch));
  }
  return { snapshot: snapshotFromState(windows, clusters, SITE, T0), clusters };
}

const events = script();
const { snapshot, clusters } = runIncremental(events);

test('the scripted stream: incremental and recomputed agree', (t) => {
  t.deepEqual(snapshot, recomputeSite(events, SITE, T0));
});

test('the broken elements are the top issues, with sensible titles', (t) => {
  const top = snapshot.issues.slice(0, 3).map((i) => [i.page, i.signalType, i.title]);
  t.deepEqual(top, [
    ['/checkout', 'rage_click', "Visitors rage-click 'Pay now' on /checkout"],
    ['/signup', 'disabled_element_attempt', "Visitors try to use the disabled 'Create account' on /signup"],
    ['/checkout', 'dead_click', "Visitors click 'Pay now' on /checkout and nothing happens"],
  ]);
  const [first] = snapshot.issues;
  t.is(
    first?.hypothesis,
    'the button likely looks active but does not respond, or responds too slowly for visitors to notice',
  );
  t.is(first?.affectedSessions, 45);
  t.is(first?.signalCount, 45 * 2 + 22);
  t.is(first?.selector, PAY);
  t.is(first?.evidence.length, 10);
  t.is(first?.evidence[0]?.signals, 3, 'evidence leads with the sessions that struggled most');
  t.true((first?.severity ?? 0) > 50, `severity ${first?.severity}`);
});

test('the healthy page and the one-session page open no issue worth ranking', (t) => {
  t.false(
    snapshot.issues.some((i) => i.page === '/lonely'),
    'one session never opens an issue',
  );
  t.false(
    snapshot.issues.some((i) => i.page === '/blog'),
    'scattered stray clicks stay below the threshold',
  );
  t.is(snapshot.issues.length, 3);
  t.is(snapshot.clusters.filter((c) => c.key.page === '/blog').length, 7, 'they are still clustered');
});

test('the healthy page scores low, the broken pages high, and the one-session page does not top the list', (t) => {
  const score = (page: string): number => snapshot.pages.find((p) => p.page === page)?.score ?? Number.NaN;
  t.deepEqual(
    snapshot.pages.map((p) => p.page),
    ['/checkout', '/signup', '/lonely', '/blog'],
  );
  t.true(score('/blog') < 5, `blog ${score('/blog')}`);
  t.true(score('/checkout') > 80, `checkout ${score('/checkout')}`);
  t.true(score('/signup') > 40, `signup ${score('/signup')}`);
  t.true(score('/lonely') < 25, `lonely ${score('/lonely')}`);
  t.is(snapshot.pages[0]?.dominantSignal, 'rage_click');
  t.true(
    snapshot.overallScore < score('/checkout') && snapshot.overallScore > score('/blog'),
    `overall ${snapshot.overallScore}`,
  );
});

test('elements rank the broken button first, with its recommendation; the one-session element is not first', (t) => {
  const [first, second] = snapshot.elements;
  t.like(first, {
    page: '/checkout',
    selector: PAY,
    label: 'Pay now',
    dominantSignal: 'rage_click',
    affectedUsers: 60,
    signals: { dead_click: 30, rage_click: 112 },
  });
  t.is(first?.recommendation, signalDefinition('rage_click')?.recommendation ?? null);
  t.like(second, { page: '/signup', dominantSignal: 'disabled_element_attempt', affectedUsers: 25 });
  t.not(snapshot.elements[0]?.page, '/lonely');
});

test('the live decision creates exactly the ranked issues', (t) => {
  const created = snapshot.clusters
    .map((c) => ({
      c,
      d: decideIssue({
        summary: c,
        existing: null,
        pageSessions: snapshot.pages.find((p) => p.page === c.key.page)?.stats.sessions ?? 0,
        now: T0,
      }),
    }))
    .filter(({ d }) => d.action === 'create');
  t.deepEqual(
    created.map(({ c }) => `${c.key.page} ${c.key.signalType}`).sort(),
    snapshot.issues.map((i) => `${i.page} ${i.signalType}`).sort(),
  );
  t.truthy(
    getCluster(clusters, { siteId: SITE, page: '/lonely', selector: 'a.promo', signalType: 'rage_click' }),
    'the lonely signal is still clustered, just below the threshold',
  );
});
