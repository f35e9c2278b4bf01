import test from 'ava';
import * as clusterState from './cluster-state.ts';
import { MIN_ISSUE_SESSIONS } from './clustering.ts';
import type { EngineEvent } from './events.ts';
import { T0, sig, view } from './fixtures.test-support.ts';
import { work } from './last-seen.ts';
import { DAY_MS, HOUR_MS } from './time.ts';
import * as pageWindows from './windows.ts';

/**
 * The cost of one batch must not grow with the sessions already in the window. Timing cannot show that on a busy
 * machine, so these tests count work instead: `work.steps` counts every loop step the engine takes over stored
 * state (last-seen.ts), and a batch against a hot page of 100k sessions must take the same steps as against 1k.
 */

const KEY = { siteId: 'site-1', page: '/hot', selector: '#buy', signalType: 'rage_click' } as const;

/**
 * A page `/hot` of `sessions` sessions, each with a view in the last day and the signals `signalsOf` gives it, built
 * in chunks of 10k and evicted at T0.
 */
function builtPage(
  sessions: number,
  signalsOf: (sid: string, i: number) => EngineEvent[],
): { windows: pageWindows.WindowState; clusters: clusterState.ClusterState } {
  const windows = pageWindows.createWindowState();
  const clusters = clusterState.createClusterState();
  for (let from = 0; from < sessions; from += 10_000) {
    const chunk: EngineEvent[] = [];
    for (let i = from; i < Math.min(sessions, from + 10_000); i++) {
      const sid = `old-${i}`;
      chunk.push(view(sid, '/hot', T0 - (i % 23) * HOUR_MS), ...signalsOf(sid, i));
    }
    pageWindows.applyEvents(windows, chunk);
    clusterState.applySignals(clusters, chunk);
  }
  pageWindows.evictWindows(windows, T0);
  clusterState.evictClusters(clusters, T0);
  return { windows, clusters };
}

/** A hot page with `sessions` sessions over the last day (views), a third of them rage-clicking #buy over the week. */
function hotPage(sessions: number): { windows: pageWindows.WindowState; clusters: clusterState.ClusterState } {
  return builtPage(sessions, (sid, i) => {
    if (i % 3 !== 0) return [];
    const rage = sig(sid, '/hot', 'rage_click', T0 - (Math.floor(i / 3) % 7) * DAY_MS - (i % 20) * HOUR_MS, {
      selector: '#buy',
      label: 'Buy',
    });
    // A second type on the same element, so the element's distinct sessions span two clusters.
    return i % 2 === 0
      ? [rage, sig(sid, '/hot', 'dead_click', T0 - (Math.floor(i / 6) % 5) * DAY_MS, { selector: '#buy' })]
      : [rage];
  });
}

/** SDK-shaped batch: 10 returning sessions and 10 new ones, views and signals on the hot page. */
function batch(): EngineEvent[] {
  const out: EngineEvent[] = [];
  for (let i = 0; i < 10; i++) {
    out.push(view(`old-${i * 3}`, '/hot', T0));
    out.push(sig(`new-${i}`, '/hot', 'rage_click', T0, { selector: '#buy', label: 'Buy' }));
  }
  return out;
}

/** The steps of what the processor does with one batch: fold, staged reads for the transaction, commit. */
function stepsOfOneBatch(state: { windows: pageWindows.WindowState; clusters: clusterState.ClusterState }): number {
  const before = work.steps;
  processBatch(state, batch());
  return work.steps - before;
}

function processBatch(
  state: { windows: pageWindows.WindowState; clusters: clusterState.ClusterState },
  events: readonly EngineEvent[],
): void {
  const wu = pageWindows.foldEvents(state.windows, events);
  for (const p of wu.pages) pageWindows.readStagedPage(state.windows, p, T0);
  const cu = clusterState.foldSignals(state.clusters, events);
  const reader = new clusterState.ClusterReader(state.clusters, cu);
  for (const c of cu.clusters) {
    reader.summary(c.key, T0);
    // As the processor asks it: is MIN_ISSUE_SESSIONS reached since the issue was resolved?
    reader.activeSince(c.key, T0 - 2 * DAY_MS + 1234, T0, MIN_ISSUE_SESSIONS);
  }
  for (const e of cu.elements) reader.elementParts(e.siteId, e.page, e.selector, T0);
  pageWindows.commitWindowUpdate(state.windows, wu);
  clusterState.commitClusterUpdate(state.clusters, cu);
}

test('a batch takes the same work on a page with 1k, 10k or 100k sessions (counted, not timed)', (t) => {
  const steps = [1_000, 10_000, 100_000].map((n) => {
    const state = hotPage(n);
    t.is(
      pageWindows.readStagedPage(
        state.windows,
        { siteId: 'site-1', page: '/hot', hours: new Map(), sessions: new Map() },
        T0,
      ).sessions,
      n,
      'the page holds the sessions',
    );
    return stepsOfOneBatch(state);
  });
  t.log(`steps per 20-event batch at 1k / 10k / 100k sessions: ${steps.join(' / ')}`);
  const [small, , large] = steps as [number, number, number];
  // Equal up to the hour/day buckets held and the small-array scans, which do not depend on the session count.
  t.true(large <= small * 1.1 + 10, `work grew with the window: ${steps.join(' → ')}`);
  t.true(large < 2_000, `a 20-event batch should take about a hundred steps per event at most (${large})`);
});

/** A deterministic generator (mulberry32), so the counted steps are the same on every run. */
function random(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let x = Math.imul(a ^ (a >>> 15), 1 | a);
    x = (x + Math.imul(x ^ (x >>> 7), 61 | x)) ^ x;
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
}

const TAIL_ELEMENTS = 500;
const TAIL_TYPES = ['rage_click', 'dead_click', 'error_encounter'];
/** An element of the long tail: a few hot ones, most rarely signalled (as the bench's Zipf profile). */
const tailSelector = (r: () => number): string => `#el-${Math.floor(TAIL_ELEMENTS * r() ** 3)}`;

/**
 * A hot page of `sessions` sessions, each with a view in the last day and a signal on a long tail of elements over
 * the week: with more sessions, more of the tail's clusters and elements outgrow their small form.
 */
function longTailPage(sessions: number): { windows: pageWindows.WindowState; clusters: clusterState.ClusterState } {
  const r = random(7);
  return builtPage(sessions, (sid, i) => {
    const type = TAIL_TYPES[Math.floor(r() * TAIL_TYPES.length)] as string;
    return [
      sig(sid, '/hot', type, T0 - (i % 7) * DAY_MS - (i % 20) * HOUR_MS, { selector: tailSelector(r), label: 'Tail' }),
    ];
  });
}

/** Batches of one session each (half returning, half new): a view, then signals on the tail. */
function tailBatches(count: number, size: () => number, existing: number): EngineEvent[][] {
  const r = random(11);
  return Array.from({ length: count }, (_, i) => {
    const sid = i % 2 === 0 ? `old-${(i * 7919) % existing}` : `new-${i}`;
    const n = size();
    const out = [view(sid, '/hot', T0)];
    for (let k = 1; k < n; k++)
      out.push(
        sig(sid, '/hot', TAIL_TYPES[k % TAIL_TYPES.length] as string, T0, { selector: tailSelector(r), label: 'Tail' }),
      );
    return out;
  });
}

/** Mean steps per batch of what the processor does with each (fold, staged reads, commit). */
function meanSteps(
  state: { windows: pageWindows.WindowState; clusters: clusterState.ClusterState },
  batches: readonly EngineEvent[][],
): number {
  const before = work.steps;
  for (const events of batches) processBatch(state, events);
  return (work.steps - before) / batches.length;
}

test('on a long tail, SDK-sized and 20-event batches take flat work (within 1.5x) from 1k to 100k sessions', (t) => {
  const sizes = [1_000, 100_000];
  const sdkSize = random(3);
  // The SDK's flushes: mostly 1-3 events, up to 10 (mean about 3).
  const sdk = () => 1 + Math.floor(9 * sdkSize() ** 2.5);
  const steps = sizes.map((n) => {
    const state = longTailPage(n);
    const large = clusterState.siteClusters(state.clusters, 'site-1').filter((c) => c.index?.isLarge).length;
    return {
      n,
      large,
      sdk: meanSteps(state, tailBatches(400, sdk, n)),
      twenty: meanSteps(
        state,
        tailBatches(200, () => 20, n),
      ),
    };
  });
  const [small, big] = steps as [(typeof steps)[0], (typeof steps)[0]];
  t.log(
    steps
      .map(
        (s) =>
          `${s.n} sessions (${s.large} large clusters): ${s.sdk.toFixed(0)} steps per SDK batch, ${s.twenty.toFixed(0)} per 20-event batch`,
      )
      .join('; '),
  );
  t.true(big.large > 10 * Math.max(1, small.large), 'the larger page has many more clusters past their small form');
  t.true(big.sdk <= small.sdk * 1.5, `SDK batch work grew ${(big.sdk / small.sdk).toFixed(2)}x`);
  t.true(big.twenty <= small.twenty * 1.5, `20-event batch work grew ${(big.twenty / small.twenty).toFixed(2)}x`);
});

test('the counter sees a scan: evidence read while a day outside the window is still held grows with the cluster', (t) => {
  // Proves the counting test above can fail: the one documented scan (a read at a `now` the tick has not evicted
  // for yet) is counted, and grows with the sessions.
  const steps = [1_000, 10_000].map((n) => {
    const { clusters } = hotPage(n);
    const later = T0 + DAY_MS; // a day has left the window but no eviction ran
    const before = work.steps;
    clusterState.summarizeCluster(clusterState.getCluster(clusters, KEY), later);
    return work.steps - before;
  });
  t.true((steps[1] as number) > 5 * (steps[0] as number), `the scan must show in the count (${steps.join(' → ')})`);
});

test('a commit changes the page and cluster in place: nothing is copied per batch', (t) => {
  const state = hotPage(2_000);
  const page = pageWindows.getPageWindow(state.windows, 'site-1', '/hot');
  const cluster = clusterState.getCluster(state.clusters, KEY);
  const index = cluster?.index;
  stepsOfOneBatch(state);
  t.truthy(index, 'a cluster of that size has its own index');
  t.is(pageWindows.getPageWindow(state.windows, 'site-1', '/hot'), page);
  t.is(clusterState.getCluster(state.clusters, KEY), cluster);
  t.is(clusterState.getCluster(state.clusters, KEY)?.index, index);
});
