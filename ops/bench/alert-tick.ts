/**
 * Part of `npm run bench -- alerts` (issue 31, item 5): the processor's tick with a site of BENCH_TICK_PAGES pages
 * (10,000) scored hourly over BENCH_TICK_HOURS hours (8 weeks) and 7 rules with no page pattern (70,000 (rule, page)
 * pairs), while ingest traffic at `rate` events/s runs on another site. BENCH_TICK_TICKS (5) ticks, the first the
 * first after the rules appeared; printed: each tick's duration and its p50 and max against the target of 2 s, and
 * events stored per second during each tick against the same traffic in a window without a tick right after it
 * (target ≥ 0.8×), with their median.
 */
import { loadavg } from 'node:os';
import { sql, type Kysely } from 'kysely';
import type { Database } from '../../shared/db/database.ts';
import { insertOrg, provisionSite } from '../../shared/tenancy/provision.ts';
import { seedAlertScale } from '../testing/alert-scale.ts';
import { sdkBatch } from '../testing/sdk-batch.ts';

const PAGES = Number(process.env.BENCH_TICK_PAGES ?? 10_000);
const HOURS = Number(process.env.BENCH_TICK_HOURS ?? 8 * 168);
const TICKS = Number(process.env.BENCH_TICK_TICKS ?? 5);
const SCALE_SITE = 'scale';
const EVENTS_PER_BATCH = 50;
const TARGET_TICK_S = 2;
const TARGET_RATIO = 0.8;

export async function benchAlertTick(o: {
  db: Kysely<Database>;
  /** The site the traffic goes to. */
  trafficSiteId: string;
  tick: () => Promise<void>;
  post: (body: string) => Promise<number>;
  rate: number;
}): Promise<string[][]> {
  // A database copied from a template seeded before (BENCH_TEMPLATE_DATABASE, harness.ts) has the site already.
  const seededSite = await o.db.selectFrom('sites').select('id').where('name', '=', SCALE_SITE).executeTakeFirst();
  if (seededSite) process.stdout.write(`alerts bench: the template's site of ${PAGES} pages, seeded before\n`);
  else {
    const orgId = await insertOrg(o.db, { name: 'tick scale', plan: 'pro', sessionLimit: null });
    const site = await provisionSite(o.db, { orgId, name: SCALE_SITE, url: 'https://scale.example' });
    const seeded = performance.now();
    process.stdout.write(`alerts bench: seeding ${PAGES} pages × ${HOURS} hours of scores and 7 rules…\n`);
    await seedAlertScale(o.db, { siteId: site.siteId, pages: PAGES, hours: HOURS, now: Date.now() });
    process.stdout.write(`  seeded in ${((performance.now() - seeded) / 1000).toFixed(0)} s\n`);
  }
  // Fresh statistics, as autovacuum would have them on a table that grew over weeks.
  await sql`analyze page_scores, alert_page_marks, alert_page_week_hours`.execute(o.db);

  let sending = true;
  let failed = 0;
  const traffic = (async () => {
    const perTick = o.rate / 10 / EVENTS_PER_BATCH;
    let carry = 0;
    let n = 0;
    while (sending) {
      const t0 = performance.now();
      carry += perTick;
      const k = Math.floor(carry);
      carry -= k;
      const bodies = Array.from({ length: k }, () =>
        JSON.stringify(sdkBatch({ page: `/t-${n++ % 100}`, events: EVENTS_PER_BATCH, signal: 'dead_click' })),
      );
      void Promise.all(bodies.map(o.post)).then((s) => (failed += s.filter((x) => x !== 202).length));
      await new Promise((r) => setTimeout(r, Math.max(0, 100 - (performance.now() - t0))));
    }
  })();
  const stored = async () =>
    Number(
      (
        await o.db
          .selectFrom('events')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('site_id', '=', o.trafficSiteId)
          .executeTakeFirstOrThrow()
      ).n,
    );
  /** Events stored per second over `work`, and how long it took. */
  const during = async (work: () => Promise<void>) => {
    const n0 = await stored();
    const t0 = performance.now();
    await work();
    const seconds = (performance.now() - t0) / 1000;
    return { seconds, rate: ((await stored()) - n0) / seconds };
  };
  const pause = (s: number) => () => new Promise<void>((r) => setTimeout(r, s * 1000));
  try {
    await pause(3)(); // the traffic settles
    const rows: string[][] = [];
    const ticks: { seconds: number; ratio: number }[] = [];
    for (let i = 1; i <= TICKS; i++) {
      const tick = await during(o.tick);
      const quiet = await during(pause(Math.max(3, tick.seconds)));
      ticks.push({ seconds: tick.seconds, ratio: tick.rate / quiet.rate });
      const label = i === 1 ? '1 (the first after the rules appeared)' : String(i);
      rows.push(
        [`tick ${label}, ${PAGES} pages × 7 rules, s`, tick.seconds.toFixed(2), '', '', `≤ ${TARGET_TICK_S}`],
        [
          `events stored/s during tick ${i} vs without a tick`,
          tick.rate.toFixed(0),
          quiet.rate.toFixed(0),
          (tick.rate / quiet.rate).toFixed(2),
          `≥ ${TARGET_RATIO}`,
        ],
      );
    }
    const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
    const seconds = sorted(ticks.map((t) => t.seconds));
    rows.push(
      [
        `tick p50 / max of ${TICKS}, s`,
        `${seconds[Math.floor((TICKS - 1) / 2)]!.toFixed(2)} / ${seconds.at(-1)!.toFixed(2)}`,
        '',
        '',
        `≤ ${TARGET_TICK_S}`,
      ],
      [
        `events stored/s during a tick vs without, median ratio of ${TICKS}`,
        '',
        '',
        sorted(ticks.map((t) => t.ratio))[Math.floor((TICKS - 1) / 2)]!.toFixed(2),
        `≥ ${TARGET_RATIO}`,
      ],
    );
    const load = loadavg()
      .map((l) => l.toFixed(2))
      .join(' ');
    return [
      ...rows,
      [`tick traffic: ${o.rate} events/s offered, failed requests`, String(failed), '', '', '0'],
      [`load average during the tick part`, load, '', '', ''],
    ];
  } finally {
    sending = false;
    await traffic;
  }
}
