import { isDeepStrictEqual } from 'node:util';
import test from 'ava';
import fc from 'fast-check';
import { SIGNAL_CATALOG } from '../../shared/domain/signal-catalog.ts';
import {
  ClusterReader,
  commitClusterUpdate,
  createClusterState,
  evictClusters,
  foldSignals,
  type ClusterState,
  type ClusterUpdate,
} from './cluster-state.ts';
import type { EngineEvent } from './events.ts';
import { T0, sig, view } from './fixtures.test-support.ts';
import { rebuildState, recomputeSite, snapshotFromState } from './recompute.ts';
import { SMALL_LIMIT } from './small-collections.ts';
import { DAY_MS, HOUR_MS, clusterWindowStart, pageWindowStart } from './time.ts';
import {
  commitWindowUpdate,
  createWindowState,
  evictWindows,
  foldEvents,
  readStagedPage,
  type WindowState,
  type WindowUpdate,
} from './windows.ts';

const SITES = ['site-a', 'site-b'];

const ALL_TYPES = [...SIGNAL_CATALOG.map((d) => d.type), 'mystery_signal'];
const READ_TIMES = [T0, T0 + 5 * HOUR_MS, T0 + 2 * DAY_MS];
/** Instants on the edges of every window read below (and one ms before each), plus a shared instant for ties. */
const EDGES = [
  T0 - HOUR_MS,
  ...READ_TIMES.flatMap((now) => [
    pageWindowStart(now),
    pageWindowStart(now) - 1,
    clusterWindowStart(now),
    clusterWindowStart(now) - 1,
  ]),
];

function rawEventArb(o: { sessions: number; sites: readonly string[]; pages: readonly string[] }) {
  return fc.record({
    siteId: fc.constantFrom(...o.sites),
    sessionId: fc.integer({ min: 1, max: o.sessions }).map((i) => `ses_${i}`),
    type: fc.constantFrom<EngineEvent['type']>(
      'page_view',
      'page_view',
      'signal',
      'signal',
      'signal',
      'conversion',
      'custom',
    ),
    // Dense around now, spread over the last day and week, and many exactly on window edges or tied.
    ts: fc.oneof(
      fc.integer({ min: T0 - 2 * HOUR_MS, max: T0 }), // dense: many events per bucket
      fc.integer({ min: T0 - 26 * HOUR_MS, max: T0 + HOUR_MS }),
      fc.integer({ min: T0 - 9 * DAY_MS, max: T0 + HOUR_MS }),
      fc.constantFrom(...EDGES),
    ),
    page: fc.constantFrom(...o.pages),
    // A few hot clusters, so sessions, labels and out-of-order times collide within one cluster often.
    signal: fc.oneof(
      { arbitrary: fc.constantFrom('rage_click', 'dead_click'), weight: 4 },
      { arbitrary: fc.option(fc.constantFrom(...ALL_TYPES), { nil: undefined }), weight: 1 },
    ),
    selector: fc.oneof(
      { arbitrary: fc.constantFrom('#pay', 'ul > li:nth-child(1) > button', 'ul>li:nth-child(2)>button'), weight: 4 },
      {
        arbitrary: fc.option(fc.constantFrom('', 'div.css-1ab2c3 > a', 'div.css-9zz8y7>a'), { nil: undefined }),
        weight: 1,
      },
    ),
    label: fc.option(fc.constantFrom('Pay now', 'Buy', '  ', ''), { nil: undefined }),
  });
}

/** A stream as the processor sees it: each stored event delivered 1-3 times, in any order, in random batches. */
// size 'max': fast-check would otherwise keep most streams under ~10 events, too few to collide in one bucket.
function streamArb(events: fc.Arbitrary<Omit<EngineEvent, 'id'>>, minLength: number, maxLength: number) {
  return fc.array(events, { minLength, maxLength, size: 'max' }).chain((raw) => {
    const events: EngineEvent[] = raw.map((e, i) => ({ ...e, id: `evt-${String(i).padStart(4, '0')}` }));
    return fc.record({
      events: fc.constant(events),
      copies: fc.array(fc.integer({ min: 1, max: 3 }), { minLength: events.length, maxLength: events.length }),
      keys: fc.array(fc.integer(), { minLength: events.length * 3, maxLength: events.length * 3 }),
      sizes: fc.array(fc.integer({ min: 1, max: 25 }), { minLength: 1, maxLength: 10 }),
      redeliver: fc.array(fc.boolean(), { minLength: 1, maxLength: 10 }),
      failCommit: fc.array(fc.boolean(), { minLength: 1, maxLength: 10 }),
      evictOffsets: fc.array(fc.integer({ min: 0, max: 3 * DAY_MS }), { maxLength: 8 }),
      crashAt: fc.option(fc.nat({ max: 15 }), { nil: null }),
    });
  });
}
type Stream = {
  events: EngineEvent[];
  copies: number[];
  keys: number[];
  sizes: number[];
  redeliver: boolean[];
  failCommit: boolean[];
  evictOffsets: number[];
  crashAt: number | null;
};

/** Path and values of the first difference between two JSON-like values ("" when equal). */
function firstDifference(a: unknown, b: unknown, path = '$'): string {
  if (isDeepStrictEqual(a, b)) return '';
  if (typeof a === 'object' && a !== null && typeof b === 'object' && b !== null) {
    for (const k of new Set([...Object.keys(a), ...Object.keys(b)])) {
      const d = firstDifference((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k], `${path}.${k}`);
      if (d !== '') return d;
    }
  }
  return `${path}: incremental ${JSON.stringify(a)} ≠ recomputed ${JSON.stringify(b)}`;
}

/**
 * The reads the processor makes of a staged batch at `now`: its pages' stats, its clusters' summaries and
 * renewed-activity counts, its elements' parts. With empty patches, the same reads of the committed state.
 */
function stagedReads(
  windows: WindowState,
  clusters: ClusterState,
  wu: WindowUpdate,
  cu: ClusterUpdate,
  now: number,
): unknown {
  const reader = new ClusterReader(clusters, cu);
  return {
    pages: wu.pages.map((p) => readStagedPage(windows, p, now)),
    clusters: cu.clusters.map((c) => [
      reader.summary(c.key, now),
      reader.activeSince(c.key, now - 2 * HOUR_MS, now),
      reader.activeSince(c.key, now - 3 * DAY_MS + 17, now),
      reader.activeSince(c.key, now - 3 * DAY_MS + 17, now, 3),
    ]),
    elements: cu.elements.map((e) => reader.elementParts(e.siteId, e.page, e.selector, now)),
  };
}

/**
 * Runs a stream through a simulated processor (store dedupe, fold, commit, evictions, an optional restart) and
 * asserts that the incremental snapshot equals the recomputation, for every site and read time. Returns the rows.
 */
function checkStream(s: Stream, sites: readonly string[]): EngineEvent[] {
  // Build the delivery sequence.
  const deliveries: { e: EngineEvent; k: number }[] = [];
  s.events.forEach((e, i) => {
    for (let c = 0; c < (s.copies[i] as number); c++) deliveries.push({ e, k: s.keys[i * 3 + c] as number });
  });
  deliveries.sort((a, b) => a.k - b.k);
  const batches: EngineEvent[][] = [];
  for (let i = 0, b = 0; i < deliveries.length; b++) {
    const size = s.sizes[b % s.sizes.length] as number;
    const batch = deliveries.slice(i, i + size).map((d) => d.e);
    batches.push(batch);
    if (s.redeliver[b % s.redeliver.length]) batches.push(batch); // nak / ack lost: the whole batch again
    i += size;
  }
  const evictTimes = [...s.evictOffsets].sort((a, b) => b - a).map((o) => T0 - o);

  // The processor: the store dedupes on event id, then the new events are folded and committed.
  const stored = new Map<string, EngineEvent>();
  let windows = createWindowState();
  let clusters = createClusterState();
  let clock = T0 - 3 * DAY_MS;
  batches.forEach((batch, b) => {
    const insertNew = (): EngineEvent[] => {
      // Like INSERT … ON CONFLICT DO NOTHING RETURNING: a duplicate inside the batch is returned once.
      const fresh: EngineEvent[] = [];
      for (const e of batch) {
        if (stored.has(e.id)) continue;
        stored.set(e.id, e);
        fresh.push(e);
      }
      return fresh;
    };
    if (s.failCommit[b % s.failCommit.length]) {
      // The transaction fails after the fold: the rows roll back and the folded copies are dropped; the batch
      // comes again (nak). The dropped fold must not have touched the committed state.
      const fresh = insertNew();
      foldEvents(windows, fresh);
      foldSignals(clusters, fresh);
      for (const e of fresh) stored.delete(e.id);
    }
    const fresh = insertNew();
    const wu = foldEvents(windows, fresh);
    const cu = foldSignals(clusters, fresh);
    // What the processor writes in the batch's transaction: the staged reads (committed state + the batch).
    const staged = stagedReads(windows, clusters, wu, cu, T0);
    const t = evictTimes.shift();
    // The tick may evict while a batch is staged: half the time it does here, between the fold and the commit.
    const evictBeforeCommit = b % 2 === 1;
    const evict = () => {
      if (t === undefined) return;
      clock = t;
      evictWindows(windows, t);
      evictClusters(clusters, t);
    };
    if (evictBeforeCommit) evict();
    commitWindowUpdate(windows, wu);
    commitClusterUpdate(clusters, cu);
    if (!evictBeforeCommit) evict();
    const committed = stagedReads(
      windows,
      clusters,
      { pages: wu.pages.map((p) => ({ ...p, hours: new Map(), sessions: new Map() })) },
      {
        clusters: cu.clusters.map((c) => ({ ...c, days: new Map(), sessions: new Map() })),
        elements: cu.elements.map((e) => ({ ...e, users: new Map() })),
      },
      T0,
    );
    if (!isDeepStrictEqual(staged, committed))
      throw new Error(`staged read ≠ committed read after batch ${b}: ${firstDifference(staged, committed)}`);
    if (s.crashAt === b) {
      // Restart: memory is rebuilt from the store, then the stream goes on.
      ({ windows, clusters } = rebuildState([...stored.values()], clock));
    }
  });

  const rows = [...stored.values()];
  for (const site of sites) {
    for (const now of READ_TIMES) {
      const incremental = snapshotFromState(windows, clusters, site, now);
      const recomputed = recomputeSite(rows, site, now);
      // A cheap check and a one-line message: a full diff per shrink step would make a failure take minutes.
      if (!isDeepStrictEqual(incremental, recomputed)) {
        throw new Error(`${site} at ${new Date(now).toISOString()}: ${firstDifference(incremental, recomputed)}`);
      }
    }
  }
  return rows;
}

test('property: incremental state equals recomputation from stored rows (duplicates, redeliveries, any order and batching, evictions, restarts)', (t) => {
  let nonTrivial = 0;
  fc.assert(
    fc.property(streamArb(rawEventArb({ sessions: 6, sites: SITES, pages: ['/a', '/b'] }), 0, 120), (s) => {
      const rows = checkStream(s, SITES);
      if (rows.some((r) => r.type === 'signal' && r.signal !== undefined)) nonTrivial++;
    }),
    // Normal runs take ~1 s; the cap only bounds shrinking after a failure (which then still fails the test).
    { numRuns: 500, interruptAfterTimeLimit: 90_000, markInterruptAsFailure: true },
  );
  t.true(nonTrivial > 400, `most runs must exercise signals (${nonTrivial})`);
});

test('property: the same on a hot page, where buckets outgrow their small-array form', (t) => {
  let big = 0;
  fc.assert(
    fc.property(streamArb(rawEventArb({ sessions: 60, sites: ['site-a'], pages: ['/hot'] }), 200, 400), (s) => {
      const rows = checkStream(s, ['site-a']);
      const perHour = new Map<number, Set<string>>();
      for (const r of rows) {
        const h = Math.floor(r.ts / HOUR_MS);
        perHour.set(h, (perHour.get(h) ?? new Set()).add(r.sessionId));
      }
      if ([...perHour.values()].some((set) => set.size > SMALL_LIMIT)) big++;
    }),
    { numRuns: 60, interruptAfterTimeLimit: 90_000, markInterruptAsFailure: true },
  );
  t.true(big > 50, `most runs must put more than ${SMALL_LIMIT} sessions in one hour bucket (${big})`);
});

test('recomputation keeps sites apart and ignores rows outside the windows', (t) => {
  const rows = [
    view('a', '/p', T0, { siteId: 'x' }),
    sig('a', '/p', 'rage_click', T0, { siteId: 'x', selector: '#b' }),
    view('b', '/p', T0, { siteId: 'y' }),
    view('c', '/p', T0 - 2 * DAY_MS, { siteId: 'x' }),
  ];
  const snap = recomputeSite(rows, 'x', T0);
  t.deepEqual(
    snap.pages.map((p) => [p.page, p.stats.sessions]),
    [['/p', 1]],
  );
  t.is(snap.clusters.length, 1);
  t.is(snap.elements.length, 1);
  t.deepEqual(recomputeSite(rows, 'nobody', T0).pages, []);
  t.is(recomputeSite(rows, 'nobody', T0).overallScore, 0);
});

test('a fold that is never committed leaves the snapshot as it was (rollback after a failed commit)', (t) => {
  const rows = [view('a', '/p', T0), sig('a', '/p', 'rage_click', T0, { selector: '#b' })];
  const { windows, clusters } = rebuildState(rows, T0);
  const before = snapshotFromState(windows, clusters, 'site-1', T0);
  const more = [view('b', '/p', T0), sig('b', '/p', 'rage_click', T0, { selector: '#b' })];
  foldEvents(windows, more);
  foldSignals(clusters, more);
  t.deepEqual(snapshotFromState(windows, clusters, 'site-1', T0), before);
  t.deepEqual(before, recomputeSite(rows, 'site-1', T0));
});
