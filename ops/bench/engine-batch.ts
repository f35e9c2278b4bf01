/**
 * The engine's per-batch cost against a page that already holds S sessions, measured in-process (no I/O): what the
 * processor does with one batch (fold, the staged reads it writes in the transaction, the commit), beside a bare
 * fold of the same events (one Map update per event and per signal: the floor of touching each event) and a
 * distinct-session floor (distinctFold).
 * Also run as a child process by the engine bench to measure memory (`node --expose-gc ops/bench/engine-batch.ts
 * memory <S>` prints {heapUsed} after building the state).
 */
import {
  ClusterReader,
  applySignals,
  commitClusterUpdate,
  createClusterState,
  evictClusters,
  foldSignals,
  type ClusterState,
} from '../../processor/engine/cluster-state.ts';
import { MIN_ISSUE_SESSIONS } from '../../processor/engine/clustering.ts';
import type { EngineEvent } from '../../processor/engine/events.ts';
import { work } from '../../processor/engine/last-seen.ts';
import { DAY_MS, HOUR_MS } from '../../processor/engine/time.ts';
import {
  applyEvents,
  commitWindowUpdate,
  createWindowState,
  evictWindows,
  foldEvents,
  pageStats,
  readStagedPage,
  type WindowState,
} from '../../processor/engine/windows.ts';
import { PerformanceObserver } from 'node:perf_hooks';
import { SiteProfile, type SdkBatch } from './workload.ts';

const SITE = '00000000-0000-4000-8000-000000000001';
export const HOT_PAGE = '/p/0';

export interface EngineState {
  windows: WindowState;
  clusters: ClusterState;
}

function toEngine(b: SdkBatch): EngineEvent[] {
  return b.events.map((e) => ({
    id: e.id,
    siteId: SITE,
    sessionId: b.sessionId,
    type: e.type,
    ts: e.ts,
    page: e.page,
    signal: e.signal,
    selector: e.selector,
    label: e.label,
  }));
}

/**
 * A state whose hot page holds `sessions` distinct sessions over the last 24 h, with the profile's signals on its
 * long tail of elements over the last 7 days (about 0.6 signal events per session), built in 20k-event chunks.
 */
export function buildHotPage(sessions: number, now: number): EngineState {
  const profile = new SiteProfile({ seed: 7 });
  const windows = createWindowState();
  const clusters = createClusterState();
  let chunk: EngineEvent[] = [];
  const flush = () => {
    applyEvents(windows, chunk);
    applySignals(clusters, chunk);
    chunk = [];
  };
  for (let i = 0; i < sessions; i++) {
    // Spread over the 24 hours of the page window (views) and the 7 days of the cluster window (signals).
    const t = now - (i % 23) * HOUR_MS - (i % 3600) * 1000;
    // A view in the last day, then one event of the profile's mix (a signal a third of the time) in the last week.
    const b = profile.batch(`old-${i}`, 2, t - ((i >> 2) % 6) * DAY_MS, HOT_PAGE);
    b.events[0] = { id: b.events[0]!.id, type: 'page_view', ts: t, page: HOT_PAGE };
    chunk.push(...toEngine(b));
    if (chunk.length >= 20_000) flush();
  }
  flush();
  evictWindows(windows, now);
  evictClusters(clusters, now);
  return { windows, clusters };
}

/** What the processor does with one batch in memory: fold, staged reads, commit. */
export function processBatch(state: EngineState, events: readonly EngineEvent[], now: number): void {
  const wu = foldEvents(state.windows, events);
  for (const p of wu.pages) readStagedPage(state.windows, p, now);
  const cu = foldSignals(state.clusters, events);
  const reader = new ClusterReader(state.clusters, cu);
  for (const c of cu.clusters) {
    reader.summary(c.key, now);
    reader.activeSince(c.key, now - 2 * DAY_MS, now, MIN_ISSUE_SESSIONS);
  }
  for (const e of cu.elements) reader.elementParts(e.siteId, e.page, e.selector, now);
  commitWindowUpdate(state.windows, wu);
  commitClusterUpdate(state.clusters, cu);
}

/** The floor: one Map update per event and one per signal's cluster key. */
function bareFold(counts: Map<string, number>, events: readonly EngineEvent[]): void {
  for (const e of events) {
    const k = `${e.siteId}\u0000${e.page}`;
    counts.set(k, (counts.get(k) ?? 0) + 1);
    if (e.type === 'signal') {
      const c = `${k}\u0000${e.selector ?? ''}\u0000${e.signal}`;
      counts.set(c, (counts.get(c) ?? 0) + 1);
    }
  }
}

/**
 * The second floor: what exact distinct sessions need at the least, one lookup and update per event in a Map of
 * the page's sessions (`seen`, holding the S sessions already on the page): touching a large structure costs more
 * per access as it outgrows the processor's caches, which the first floor's small Map never shows.
 */
function distinctFold(seen: Map<string, number>, events: readonly EngineEvent[]): void {
  for (const e of events) if ((seen.get(e.sessionId) ?? -1) < e.ts) seen.set(e.sessionId, e.ts);
}

/** A page's sessions as the distinct floor starts from: the `existing` sessions hotBatches draws old ones from. */
export function seenSessions(existing: number, now: number): Map<string, number> {
  const seen = new Map<string, number>();
  for (let i = 0; i < existing; i++) seen.set(`old-${i}`, now - (i % 23) * HOUR_MS);
  return seen;
}

/** SDK batches on the hot page: half from sessions already in the window, half from new ones. */
export function hotBatches(count: number, size: 'sdk' | number, existing: number, now: number): EngineEvent[][] {
  const profile = new SiteProfile({ seed: 11 });
  return Array.from({ length: count }, (_, i) => {
    const session = i % 2 === 0 ? `old-${(i * 7919) % existing}` : `new-${i}`;
    return toEngine(profile.batch(session, size === 'sdk' ? profile.sdkSize() : size, now, HOT_PAGE));
  });
}

export interface BatchCost {
  /** Mean µs per batch through the engine (the median pass). */
  engineUs: number;
  /** Mean µs per batch through the engine in each counted pass, in pass order (the same pass of every run is one stretch of time). */
  passesUs: number[];
  /** Mean µs per batch through the bare fold. */
  bareUs: number;
  /** Mean µs per batch through the distinct-session floor (`distinctFold`). */
  distinctUs: number;
  /** p99 µs per batch through the engine. */
  p99Us: number;
  /** Mean ms of garbage collection per batch while the engine ran (V8 'gc' performance entries). */
  gcUs: number;
  /** Mean engine work steps per batch (deterministic). */
  steps: number;
  events: number;
}

/** One state and the batches to measure on it. */
export interface BatchRun {
  state: EngineState;
  batches: readonly EngineEvent[][];
  /** The page's sessions for the distinct floor (seenSessions). */
  seen: Map<string, number>;
}

/**
 * Runs each run's batches through the engine and both floors in `passes` slices, the runs taking turns within
 * each pass (the order rotated from pass to pass), so every state is measured in the same stretches of the
 * machine's time: on a shared machine the speed drifts by tens of percent between seconds, and measuring one state
 * after another compared the drift, not the states. The first pass over each state is a warm-up, not counted: it
 * was 1.5-3× the later ones (each state's first touches, its code paths' first optimization), and it fell on the
 * median's side at random. Per run the median of the other passes.
 */
export async function measureBatches(runs: readonly BatchRun[], now: number, passes = 7): Promise<BatchCost[]> {
  const results = runs.map(() => ({
    engine: [] as number[],
    bare: [] as number[],
    distinct: [] as number[],
    per: [] as number[],
    steps: 0,
    batches: 0,
    windows: [] as [number, number][],
  }));
  // GC entries arrive asynchronously: keep them all, then count those that started inside a run's engine pass.
  const gcs: { start: number; duration: number }[] = [];
  const gcObserver = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) gcs.push({ start: e.startTime, duration: e.duration });
  });
  gcObserver.observe({ entryTypes: ['gc'] });
  for (let pass = 0; pass < passes; pass++) {
    for (let k = 0; k < runs.length; k++) {
      const i = (k + pass) % runs.length;
      const { state, batches, seen } = runs[i]!;
      const r = results[i]!;
      const size = Math.floor(batches.length / passes);
      const slice = batches.slice(pass * size, (pass + 1) * size);
      const warmUp = pass === 0;
      const s0 = work.steps;
      let t = performance.now();
      const per: number[] = [];
      for (const b of slice) {
        const t1 = performance.now();
        processBatch(state, b, now);
        per.push(performance.now() - t1);
      }
      const engineUs = ((performance.now() - t) * 1000) / slice.length;
      const window: [number, number] = [t, performance.now()];
      const steps = work.steps - s0;
      const counts = new Map<string, number>();
      t = performance.now();
      for (const b of slice) bareFold(counts, b);
      const bareUs = ((performance.now() - t) * 1000) / slice.length;
      t = performance.now();
      for (const b of slice) distinctFold(seen, b);
      const distinctUs = ((performance.now() - t) * 1000) / slice.length;
      if (warmUp) continue;
      r.engine.push(engineUs);
      r.per.push(...per);
      r.windows.push(window);
      r.steps += steps;
      r.batches += slice.length;
      r.bare.push(bareUs);
      r.distinct.push(distinctUs);
    }
  }
  await new Promise((r) => setTimeout(r, 50));
  gcObserver.disconnect();
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
  return results.map((r, i) => {
    let gcMs = 0;
    for (const g of gcs) if (r.windows.some(([a, b]) => g.start >= a && g.start <= b)) gcMs += g.duration;
    r.per.sort((a, b) => a - b);
    const batches = runs[i]!.batches;
    return {
      engineUs: median(r.engine),
      passesUs: r.engine,
      bareUs: median(r.bare),
      distinctUs: median(r.distinct),
      p99Us: (r.per[Math.floor(r.per.length * 0.99)] as number) * 1000,
      gcUs: (gcMs * 1000) / r.batches,
      steps: r.steps / r.batches,
      events: batches.reduce((n, b) => n + b.length, 0) / batches.length,
    };
  });
}

/**
 * `b`'s cost over `a`'s, measured in the same runs of measureBatches: the median over passes of the ratio within
 * each pass. Every run takes its turn in each pass, so a pass's ratio compares two states in the same stretch of
 * the machine's time; the machine's speed moved by a third between passes in one run, and a ratio of the two
 * medians could pick its numerator and denominator from different speeds.
 */
export function passRatio(a: BatchCost, b: BatchCost): { median: number; min: number; max: number } {
  const ratios = b.passesUs.map((x, i) => x / (a.passesUs[i] as number)).sort((x, y) => x - y);
  return {
    median: ratios[Math.floor(ratios.length / 2)] as number,
    min: ratios[0] as number,
    max: ratios.at(-1) as number,
  };
}

// Child-process mode: memory of a hot page of S sessions.
if (process.argv[2] === 'memory') {
  const sessions = Number(process.argv[3]);
  const gc = (globalThis as { gc?: () => void }).gc;
  const settle = async () => {
    for (let i = 0; i < 4; i++) {
      gc?.();
      await new Promise((r) => setTimeout(r, 300));
    }
  };
  await settle();
  const before = process.memoryUsage().heapUsed;
  const state = buildHotPage(sessions, Date.now());
  await settle();
  const after = process.memoryUsage();
  // NOTE: read after the measurement, so the state is still live when it is taken.
  const held = pageStats(state.windows, SITE, HOT_PAGE, Date.now()).sessions + state.clusters.sites.size;
  process.stdout.write(`${JSON.stringify({ heapUsed: after.heapUsed - before, rss: after.rss, sessions, held })}\n`);
}
