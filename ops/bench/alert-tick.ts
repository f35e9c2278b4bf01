/**
 * Part of `npm run bench -- alerts` (issue 31, item 5): the processor's tick with a site of BENCH_TICK_PAGES pages
 * (10,000) scored hourly over BENCH_TICK_HOURS hours (8 weeks) and 7 rules with no page pattern (70,000 (rule, page)
 * pairs), while open-loop ingest traffic at BENCH_TICK_RATE events/s (1,000) runs on another site. BENCH_TICK_TICKS (10) ticks, the
 * first the first after the rules appeared, each after BENCH_TICK_GAP_S (4) seconds or more without one.
 *
 * Printed: each tick's duration (target ≤ 2 s) and the events the processor stored per second during it, against
 * windows of the same length without a tick in the same run: one ending a second before the tick started and one
 * starting two seconds after it ended (the batches delayed by the tick stored by then), their mean the tick's baseline;
 * per tick and over all the ticks' time (target ≥ 0.8×). Stored events are read from the processor's own counter
 * (`friction_processor_events_total{outcome="stored"}`, counted as each batch commits), sampled every 10 ms, so a
 * window's count costs the database nothing. A single tick's ratio moves by a commit (about 0.2 s of batches) more or
 * less at either end of a window as short as the tick; the total over ten ticks much less. Also per tick: the event
 * loop's longest stall (what the tick's JavaScript held the batches' thread for).
 * BENCH_PROFILE_DIR=dir writes a V8 CPU profile of each tick (`tick-<n>.cpuprofile`).
 */
import { writeFileSync } from 'node:fs';
import { Session } from 'node:inspector/promises';
import { loadavg } from 'node:os';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../shared/db/database.ts';
import { registry } from '../../shared/http/metrics.ts';
import { insertOrg, provisionSite } from '../../shared/tenancy/provision.ts';
import { seedAlertScale } from '../testing/alert-scale.ts';
import { sdkBatch } from '../testing/sdk-batch.ts';
import { OpenLoopSchedule } from './open-loop.ts';

const PAGES = Number(process.env.BENCH_TICK_PAGES ?? 10_000);
const HOURS = Number(process.env.BENCH_TICK_HOURS ?? 8 * 168);
const TICKS = Number(process.env.BENCH_TICK_TICKS ?? 10);
const GAP_S = Number(process.env.BENCH_TICK_GAP_S ?? 4);
/** Below what the loaded machine stores (about 1,500-4,700 events/s at load 20-45): a steady baseline, no backlog. */
const RATE = Number(process.env.BENCH_TICK_RATE ?? 1000);
const SCALE_SITE = 'scale';
const EVENTS_PER_BATCH = 50;
/** Requests in flight past which a due batch is counted as not sent (the schedule does not wait for answers). */
const MAX_IN_FLIGHT = 2000;
const TARGET_TICK_S = 2;
const TARGET_RATIO = 0.8;
/** Where the baseline windows sit: one ends this long before the tick, the other starts this long after it. */
const BEFORE_S = 1;
const AFTER_S = 2;

/**
 * The scale site (seeded before the roles start: the seeding holds page_scores' lock for minutes). A database copied
 * from a template seeded before (BENCH_TEMPLATE_DATABASE, harness.ts) has it already.
 */
export async function seedTickScale(db: Kysely<Database>): Promise<void> {
  const seededSite = await db.selectFrom('sites').select('id').where('name', '=', SCALE_SITE).executeTakeFirst();
  if (seededSite) process.stdout.write(`alerts bench: the template's site of ${PAGES} pages, seeded before\n`);
  else {
    const orgId = await insertOrg(db, { name: 'tick scale', plan: 'pro', sessionLimit: null });
    const site = await provisionSite(db, { orgId, name: SCALE_SITE, url: 'https://scale.example' });
    const seeded = performance.now();
    process.stdout.write(`alerts bench: seeding ${PAGES} pages × ${HOURS} hours of scores and 7 rules…\n`);
    await seedAlertScale(db, { siteId: site.siteId, pages: PAGES, hours: HOURS, now: Date.now() });
    process.stdout.write(
      `  seeded in ${((performance.now() - seeded) / 1000).toFixed(0)} s (load average ${loadAverage()})\n`,
    );
  }
  // Fresh statistics, as autovacuum would have them on a table that grew over weeks.
  await sql`analyze page_scores, alert_page_marks, alert_page_week_hours`.execute(db);
}

const loadAverage = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

/** A counter read at times: (ms, value) in time order. */
export type Timeline = readonly (readonly [number, number])[];

/** The counter's value at `t`: the last reading at or before it (it only moves when a batch commits). */
export function valueAt(timeline: Timeline, t: number): number {
  let lo = 0;
  let hi = timeline.length - 1;
  if (hi < 0 || timeline[0]![0] > t) return timeline[0]?.[1] ?? 0;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (timeline[mid]![0] <= t) lo = mid;
    else hi = mid - 1;
  }
  return timeline[lo]![1];
}

interface TickWindows {
  seconds: number;
  /** Events stored during the tick, and in its two baseline windows of the same length. */
  during: number;
  before: number;
  after: number;
}

/** A tick's window and its two baselines of the same length (BEFORE_S before it, AFTER_S after it). */
export function tickWindows(timeline: Timeline, tick: { start: number; end: number }): TickWindows {
  const len = tick.end - tick.start;
  const stored = (from: number) => valueAt(timeline, from + len) - valueAt(timeline, from);
  const before = tick.start - BEFORE_S * 1000 - len;
  return {
    seconds: len / 1000,
    during: stored(tick.start),
    before: stored(before),
    after: stored(tick.end + AFTER_S * 1000),
  };
}

/** Events stored per second during the ticks over their baselines': per tick, and over all the ticks' time. */
export function ratios(ticks: readonly TickWindows[]): { perTick: number[]; total: number } {
  const baseline = (w: TickWindows) => (w.before + w.after) / 2;
  const sum = (f: (w: TickWindows) => number) => ticks.reduce((s, w) => s + f(w), 0);
  return {
    perTick: ticks.map((w) => w.during / baseline(w)),
    total: sum((w) => w.during) / sum(baseline),
  };
}

async function storedEvents(): Promise<number> {
  const metric = registry.getSingleMetric('friction_processor_events_total');
  if (!metric) return 0;
  const { values } = await metric.get();
  return values.find((v) => v.labels.outcome === 'stored')?.value ?? 0;
}

export async function benchAlertTick(o: {
  tick: () => Promise<void>;
  post: (body: string) => Promise<number>;
}): Promise<string[][]> {
  // Open loop: batches fall due at the rate whatever the answers; one past MAX_IN_FLIGHT is counted, not sent.
  const schedule = new OpenLoopSchedule(RATE);
  let sending = true;
  let inFlight = 0;
  let accepted = 0;
  let failed = 0;
  let skipped = 0;
  const sendStart = performance.now();
  const traffic = (async () => {
    let n = 0;
    while (sending) {
      while (schedule.due((performance.now() - sendStart) / 1000)) {
        schedule.offer(EVENTS_PER_BATCH);
        if (inFlight >= MAX_IN_FLIGHT) {
          skipped++;
          continue;
        }
        inFlight++;
        const body = JSON.stringify(
          sdkBatch({ page: `/t-${n++ % 100}`, events: EVENTS_PER_BATCH, signal: 'dead_click' }),
        );
        void o.post(body).then((status) => {
          inFlight--;
          if (status === 202) accepted += EVENTS_PER_BATCH;
          else failed++;
        });
      }
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  // The stored-events timeline, sampled every 10 ms for the whole run.
  const timeline: [number, number][] = [];
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      timeline.push([performance.now(), await storedEvents()]);
      await new Promise((r) => setTimeout(r, 10));
    }
  })();
  const profileDir = process.env.BENCH_PROFILE_DIR;
  const inspector = profileDir ? new Session() : undefined;
  if (inspector) inspector.connect(), await inspector.post('Profiler.enable');
  const stall = monitorEventLoopDelay({ resolution: 10 });
  stall.enable();
  const pause = (s: number) => new Promise<void>((r) => setTimeout(r, s * 1000));
  try {
    await pause(5); // the traffic settles
    const loadBefore = loadAverage();
    const ticks: { start: number; end: number; stallMs: number; baseStallMs: number }[] = [];
    for (let i = 1; i <= TICKS; i++) {
      // The longest stall of the seconds before (no tick), then the tick's own.
      const baseStallMs = stall.max / 1e6;
      stall.reset();
      if (inspector) await inspector.post('Profiler.start');
      const start = performance.now();
      await o.tick();
      const end = performance.now();
      const stallMs = stall.max / 1e6;
      stall.reset();
      if (inspector) {
        const { profile } = await inspector.post('Profiler.stop');
        writeFileSync(`${profileDir}/tick-${i}.cpuprofile`, JSON.stringify(profile));
      }
      ticks.push({ start, end, stallMs, baseStallMs });
      // Room for both baselines of this tick and the next one's before-window.
      await pause(Math.max(GAP_S, AFTER_S + BEFORE_S + (2 * (end - start)) / 1000 + 1));
    }
    sampling = false;
    await sampler;
    const sentSeconds = (performance.now() - sendStart) / 1000;
    const windows = ticks.map((t) => tickWindows(timeline, t));
    const r = ratios(windows);
    const rows: string[][] = windows.map((w, i) => [
      `tick ${i === 0 ? '1 (the first after the rules appeared)' : i + 1}: s; events stored/s during it vs same-length windows without (before, after); event loop's longest stall ms`,
      `${w.seconds.toFixed(2)} s; ${(w.during / w.seconds).toFixed(0)}/s; ${ticks[i]!.stallMs.toFixed(0)} ms`,
      `${(w.before / w.seconds).toFixed(0)}, ${(w.after / w.seconds).toFixed(0)}/s; ${ticks[i]!.baseStallMs.toFixed(0)} ms`,
      r.perTick[i]!.toFixed(2),
      '',
    ]);
    const seconds = windows.map((w) => w.seconds).sort((a, b) => a - b);
    const total = (f: (w: TickWindows) => number) => windows.reduce((s, w) => s + f(w), 0);
    const tickSeconds = total((w) => w.seconds);
    const sortedRatios = [...r.perTick].sort((a, b) => a - b);
    rows.push(
      [
        `tick p50 / max of ${TICKS}, s`,
        `${seconds[Math.floor((TICKS - 1) / 2)]!.toFixed(2)} / ${seconds.at(-1)!.toFixed(2)}`,
        '',
        '',
        `≤ ${TARGET_TICK_S}`,
      ],
      [
        `events stored/s over all ${TICKS} ticks (${tickSeconds.toFixed(1)} s) vs their baselines`,
        (total((w) => w.during) / tickSeconds).toFixed(0),
        (total((w) => (w.before + w.after) / 2) / tickSeconds).toFixed(0),
        r.total.toFixed(2),
        `≥ ${TARGET_RATIO}`,
      ],
      [
        `per-tick ratio min / median / max`,
        `${sortedRatios[0]!.toFixed(2)} / ${sortedRatios[Math.floor((TICKS - 1) / 2)]!.toFixed(2)} / ${sortedRatios.at(-1)!.toFixed(2)}`,
        '',
        '',
        '',
      ],
      [
        `tick traffic, open loop: events/s offered (asked), accepted; requests failed, not sent (> ${MAX_IN_FLIGHT} in flight)`,
        `${(schedule.offeredEvents / sentSeconds).toFixed(0)} (${RATE}), ${(accepted / sentSeconds).toFixed(0)}`,
        '',
        '',
        '',
      ],
      [`tick traffic: failed requests, not sent`, `${failed}, ${skipped}`, '', '', '0, 0'],
      [`load average before / after the ticks`, `${loadBefore} / ${loadAverage()}`, '', '', ''],
    );
    return rows;
  } finally {
    sending = false;
    sampling = false;
    stall.disable();
    await Promise.all([traffic, sampler]);
    inspector?.disconnect();
  }
}
