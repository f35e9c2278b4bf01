import test from 'ava';
import { ClusterReader, applySignals, commitClusterUpdate, createClusterState, evictClusters, foldSignals, getCluster, summarizeCluster, type ClusterState } from './cluster-state.ts';
import { MIN_ISSUE_SESSIONS } from './clustering.ts';
import type { EngineEvent } from './events.ts';
import { T0, sig, view } from './fixtures.test-support.ts';
import { work } from './last-seen.ts';
import { DAY_MS, HOUR_MS } from './time.ts';
import { applyEvents, commitWindowUpdate, createWindowState, evictWindows, foldEvents, getPageWindow, readStagedPage, type WindowState } from './windows.ts';

/**
 * The cost of one batch must not grow with the sessions already in the window. Timing cannot show that on a busy
 * machine, so these tests count work instead: `work.steps` counts every loop step the engine takes over stored
 * state (last-seen.ts), and a batch against a hot page of 100k sessions must take the same steps as against 1k.
 */

const KEY = { siteId: 'site-1', page: '/hot', selector: '#buy', signalType: 'rage_click' } as const;

/** A hot page with `sessions` sessions over the last day (views), a third of them rage-clicking #buy over the week. */
function hotPage(sessions: number): { windows: WindowState; clusters: ClusterState } {
  const windows = createWindowState();
  const clusters = createClusterState();
  for (let from = 0; from < sessions; from += 10_000) {
    const chunk: EngineEvent[] = [];
    for (let i = from; i < Math.min(sessions, from + 10_000); i++) {
      const sid = `old-${i}`;
      chunk.push(view(sid, '/hot', T0 - (i % 23) * HOUR_MS));
      if (i % 3 === 0) {
        chunk.push(sig(sid, '/hot', 'rage_click', T0 - (Math.floor(i / 3) % 7) * DAY_MS - (i % 20) * HOUR_MS, { selector: '#buy', label: 'Buy' }));
        // A second type on the same element, so the element's distinct sessions span two clusters.
        if (i % 2 === 0) chunk.push(sig(sid, '/hot', 'dead_click', T0 - (Math.floor(i / 6) % 5) * DAY_MS, { selector: '#buy' }));
      }
    }
    applyEvents(windows, chunk);
    applySignals(clusters, chunk);
  }
  evictWindows(windows, T0);
  evictClusters(clusters, T0);
  return { windows, clusters };
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
function stepsOfOneBatch(state: { windows: WindowState; clusters: ClusterState }): number {
  const events = batch();
  const before = work.steps;
  const wu = foldEvents(state.windows, events);
  for (const p of wu.pages) readStagedPage(state.windows, p, T0);
  const cu = foldSignals(state.clusters, events);
  const reader = new ClusterReader(state.clusters, cu);
  for (const c of cu.clusters) {
    reader.summary(c.key, T0);
    // As the processor asks it: is MIN_ISSUE_SESSIONS reached since the issue was resolved?
    reader.activeSince(c.key, T0 - 2 * DAY_MS + 1234, T0, MIN_ISSUE_SESSIONS);
  }
  for (const e of cu.elements) reader.elementParts(e.siteId, e.page, e.selector, T0);
  commitWindowUpdate(state.windows, wu);
  commitClusterUpdate(state.clusters, cu);
  return work.steps - before;
}

test('a batch takes the same work on a page with 1k, 10k or 100k sessions (counted, not timed)', (t) => {
  const steps = [1_000, 10_000, 100_000].map((n) => {
    const state = hotPage(n);
    t.is(readStagedPage(state.windows, { siteId: 'site-1', page: '/hot', hours: new Map(), sessions: new Map() }, T0).sessions, n, 'the page holds the sessions');
    return stepsOfOneBatch(state);
  });
  t.log(`steps per 20-event batch at 1k / 10k / 100k sessions: ${steps.join(' / ')}`);
  const [small, , large] = steps as [number, number, number];
  // Equal up to the hour/day buckets held and the small-array scans, which do not depend on the session count.
  t.true(large <= small * 1.1 + 10, `work grew with the window: ${steps.join(' → ')}`);
  t.true(large < 2_000, `a 20-event batch should take about a hundred steps per event at most (${large})`);
});

test('the counter sees a scan: evidence read while a day outside the window is still held grows with the cluster', (t) => {
  // Proves the counting test above can fail: the one documented scan (a read at a `now` the tick has not evicted
  // for yet) is counted, and grows with the sessions.
  const steps = [1_000, 10_000].map((n) => {
    const { clusters } = hotPage(n);
    const later = T0 + DAY_MS; // a day has left the window but no eviction ran
    const before = work.steps;
    summarizeCluster(getCluster(clusters, KEY), later);
    return work.steps - before;
  });
  t.true((steps[1] as number) > 5 * (steps[0] as number), `the scan must show in the count (${steps.join(' → ')})`);
});

test('a commit changes the page and cluster in place: nothing is copied per batch', (t) => {
  const state = hotPage(2_000);
  const page = getPageWindow(state.windows, 'site-1', '/hot');
  const cluster = getCluster(state.clusters, KEY);
  const index = cluster?.index;
  stepsOfOneBatch(state);
  t.truthy(index, 'a cluster of that size has its own index');
  t.is(getPageWindow(state.windows, 'site-1', '/hot'), page);
  t.is(getCluster(state.clusters, KEY), cluster);
  t.is(getCluster(state.clusters, KEY)?.index, index);
});
