/**
 * Child process of the engine bench: builds the processor's in-memory engine state for one scenario and prints
 * {rss, heapUsed, heapTotal, rssReduced, …} as JSON. Run with --expose-gc so the figure is live memory, not garbage.
 * STEP pages go into one fold (1,000 pages are 25,000 events: a processor fetch of 1,000 messages of 20-25 events,
 * the largest a fetch brings; an SDK-shaped fetch is about 3,300 events).
 * Its heap grows as a processor's does: HEAP_GROWTH_PERCENT (default the processor's) is applied as the role applies
 * PROCESSOR_HEAP_GROWTH_PERCENT, by the same function, once the process runs.
 *   STEP=<pages per batch, default 1000> node --expose-gc ops/bench/engine-memory.ts <pages> <clustersPerPage>
 */
import { applyEvents, createWindowState } from '../../processor/engine/windows.ts';
import { applySignals, createClusterState } from '../../processor/engine/cluster-state.ts';
import type { EngineEvent } from '../../processor/engine/events.ts';
import v8 from 'node:v8';
import { limitHeapGrowth } from '../../processor/heap-growth.ts';
import { PROCESSOR_HEAP_GROWTH_PERCENT_DEFAULT } from '../../shared/config.ts';

limitHeapGrowth(Number(process.env.HEAP_GROWTH_PERCENT ?? PROCESSOR_HEAP_GROWTH_PERCENT_DEFAULT));

/** A copy of `s` that is a distinct string object, as a separate message's decode gives. */
const fresh = (s: string): string => JSON.parse(JSON.stringify(s)) as string;
const pages = Number(process.argv[2]);
const clustersPerPage = Number(process.argv[3]);
const SIGNALS = ['rage_click', 'dead_click', 'disabled_element_attempt', 'error_encounter', 'form_abandon'];
const site = '00000000-0000-4000-8000-000000000001';
const now = Date.now();
const windows = createWindowState();
const clusters = createClusterState();
let events = 0;
const started = performance.now();
// Per page: 5 sessions viewing it, then `clustersPerPage` distinct (selector, type) clusters with 2 signals each.
const STEP = Number(process.env.STEP ?? 1000);
for (let p = 0; p < pages; p += STEP) {
  const batch: EngineEvent[] = [];
  for (let q = p; q < Math.min(pages, p + STEP); q++) {
    const page = `/p/${q}`;
    // One session id string per (page, session), as the processor's decode of one message gives all its events one
    // (a string per event would measure copies a processor does not hold).
    const sessions = Array.from({ length: 5 }, (_, s) => `s${(q * 7 + s) % 50_000}`);
    // One message per (page, session), and as its decode does (V8's JSON.parse interns strings under 10 characters
    // only), each message its own copy of the site id, of each signal type and of the element's label.
    const messages = Array.from({ length: 5 }, () => ({
      site: fresh(site),
      signals: SIGNALS.map(fresh),
      label: fresh('Add to cart'),
    }));
    for (let s = 0; s < 5; s++)
      batch.push({
        id: `${q}-v${s}`,
        siteId: messages[s]!.site,
        sessionId: sessions[s] as string,
        type: 'page_view',
        ts: now - s * 60_000,
        page,
      });
    for (let c = 0; c < clustersPerPage; c++) {
      for (let k = 0; k < 2; k++) {
        const m = messages[k]!;
        batch.push({
          id: `${q}-${c}-${k}`,
          siteId: m.site,
          sessionId: sessions[k] as string,
          type: 'signal',
          ts: now - k * 3_600_000,
          page,
          signal: m.signals[c % SIGNALS.length],
          selector: `#el-${Math.floor(c / SIGNALS.length)}`,
          label: m.label,
        });
      }
    }
  }
  applyEvents(windows, batch);
  applySignals(clusters, batch);
  events += batch.length;
}
const ms = performance.now() - started;
// Collect twice with a pause: V8 returns freed pages to the OS lazily, and the figure we want is what a processor
// holding this state keeps resident, not the high-water mark of building it.
const gc = (globalThis as { gc?: (options?: object) => void }).gc;
for (let i = 0; i < 5; i++) {
  gc?.();
  await new Promise((r) => setTimeout(r, 400));
}
const m = process.memoryUsage();
// RSS beyond V8's spaces: mostly the pages V8 pools for reuse after a collection frees them (256 KiB each). A full
// collection keeps them; only a memory-reducing one (memory pressure, the memory reducer, `last-resort` here)
// returns them to the OS, so RSS after it is what the state itself needs resident.
const spacesMb = Object.fromEntries(
  v8
    .getHeapSpaceStatistics()
    .filter((s) => s.physical_space_size > 2 ** 20)
    .map((s) => [s.space_name, Math.round(s.physical_space_size / 2 ** 20)]),
);
gc?.({ type: 'major', execution: 'sync', flavor: 'last-resort' });
const reduced = process.memoryUsage();
// NOTE: the states are read after the measurement, so V8 cannot collect them as dead before it.
let clusterCount = 0;
let elementCount = 0;
for (const pagesOfSite of clusters.sites.values()) {
  for (const els of pagesOfSite.values()) {
    for (const el of els instanceof Map ? els.values() : els) {
      elementCount++;
      clusterCount += el.clusters.length;
    }
  }
}
let pageCount = 0;
for (const pagesOfSite of windows.sites.values()) pageCount += pagesOfSite.size;
process.stdout.write(
  `${JSON.stringify({ rss: m.rss, heapUsed: m.heapUsed, heapTotal: m.heapTotal, external: m.external, spacesMb, rssReduced: reduced.rss, heapUsedReduced: reduced.heapUsed, events, ms, pages: pageCount, elements: elementCount, clusters: clusterCount })}\n`,
);
