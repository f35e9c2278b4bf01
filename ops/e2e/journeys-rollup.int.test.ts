import test from 'ava';
import fc from 'fast-check';
import { randomUUID } from 'node:crypto';
import { isDeepStrictEqual } from 'node:util';
import { sql, type Kysely } from 'kysely';
import type { EventBatchMessage, StreamEvent } from '../../shared/contracts/ingest.ts';
import type { Database } from '../../shared/db/database.ts';
import { JOURNEY_SIGNAL_TYPES, rebuildJourneySteps } from '../../shared/db/journey-steps.ts';
import { insertOrg, provisionSite } from '../../shared/tenancy/provision.ts';
import { applySiteRetention } from '../../shared/tenancy/retention.ts';
import { withTestDatabase } from '../../shared/testing/database.ts';
import { openEmbeddedTestDatabase } from '../../shared/testing/embedded-template.ts';
import { eraseSessions } from '../../api/routes/privacy/privacy.queries.ts';
import { InDoubtEvents, storeBatch, type FreshEventsSink } from '../../processor/events.consumer.ts';
import { journeyFriction } from '../../api/routes/journeys/journeys.routes.ts';
import { journeyFrictionFromEvents } from '../../api/routes/journeys/journeys.reference.ts';
import type { JourneyQuery } from '../../api/routes/journeys/journeys.schema.ts';

// Rollup = raw for the journeys route (journey_steps, migration 0410): random sessions go through the processor's batch
// write in random batches (events out of order within a batch, a session's later batch stored before its earlier one,
// equal times, batches redelivered), then the route's answer from the steps must equal the answer the route gave from
// the raw events (journeys.reference.ts, equal times in the steps' fixed order), for environments, limits, minimum
// weights and signal types at two clocks (`QUESTIONS`); again after a privacy erasure, after retention (a session straddling the
// cutoff keeps its newer steps), and after the steps are rebuilt from the events (the migration's and `friction
// demo`'s backfill). The steps themselves are held to the raw page views and decorator signals.

const NOW = Date.parse('2026-03-15T12:34:56.789Z');
const DAY = 86_400_000;
const PAGES = ['/', '/cart', '/checkout', '/a"b', '/ü'];
const deriveNothing: FreshEventsSink = { stage: async () => () => {} };

interface Plan {
  sessions: {
    environment: 'staging' | 'production' | undefined;
    /** Start, days before NOW (some before the 30-day window, some straddling the 31-day retention). */
    startDaysAgo: number;
    events: {
      type: 'page_view' | 'signal' | 'conversion';
      page: number;
      at: number;
      signal: string;
      confidence?: number;
    }[];
    /** Batches: how many parts the events are cut into. */
    parts: number;
  }[];
  /** Order of the batches (a permutation key per batch) and which ones are sent twice. */
  shuffle: number[];
  redeliver: number[];
  /** The questions asked at each stage besides the broadest one: a few of every combination, different each run. */
  questions: Question[];
}

interface Question {
  environment: 'production' | 'staging';
  limit: number;
  min_friction_weight: number;
  signal_type: string | undefined;
  at: number;
}

// Every combination of environment, limit, minimum weight, signal type and clock. Asking all 108 at each of the four
// stages of every run took PGlite over three minutes; each run asks the broadest one and a random few, so the runs
// together cover the combinations.
const QUESTIONS: Question[] = (['production', 'staging'] as const).flatMap((environment) =>
  [1, 3, 1000].flatMap((limit) =>
    [0, 1, 9].flatMap((min_friction_weight) =>
      [undefined, 'rage_click', 'navigation_loop'].flatMap((signal_type) =>
        [NOW, NOW - 10 * DAY].map((at) => ({ environment, limit, min_friction_weight, signal_type, at })),
      ),
    ),
  ),
);
const BROADEST: Question = {
  environment: 'production',
  limit: 1000,
  min_friction_weight: 0,
  signal_type: undefined,
  at: NOW,
};

const planArb: fc.Arbitrary<Plan> = fc.record({
  sessions: fc.array(
    fc.record({
      environment: fc.constantFrom<Plan['sessions'][number]['environment']>(undefined, 'production', 'staging'),
      startDaysAgo: fc.oneof(fc.integer({ min: 0, max: 3 }), fc.integer({ min: 0, max: 40 })),
      events: fc.array(
        fc.record(
          {
            type: fc.constantFrom<'page_view' | 'signal' | 'conversion'>(
              'page_view',
              'page_view',
              'signal',
              'conversion',
            ),
            page: fc.integer({ min: 0, max: PAGES.length - 1 }),
            // Minutes, some of them equal; a few far apart, so a session can straddle the window or the cutoff.
            at: fc.oneof(fc.integer({ min: 0, max: 30 }), fc.integer({ min: 0, max: 6 * 24 * 60 })),
            signal: fc.constantFrom('rage_click', 'error_encounter', 'form_abandon', 'navigation_loop', 'dead_click'),
            confidence: fc.constantFrom(0.1, 0.25, 0.5, 0.9, 1.5),
          },
          { requiredKeys: ['type', 'page', 'at', 'signal'] },
        ),
        { minLength: 1, maxLength: 14 },
      ),
      parts: fc.integer({ min: 1, max: 4 }),
    }),
    { minLength: 1, maxLength: 14 },
  ),
  shuffle: fc.array(fc.integer(), { minLength: 60, maxLength: 60 }),
  redeliver: fc.array(fc.integer({ min: 0, max: 59 }), { maxLength: 3 }),
  questions: fc.shuffledSubarray(QUESTIONS, { minLength: 6, maxLength: 10 }),
});

/** A batch of one session's events. */
const batchOf = (
  siteId: string,
  sessionId: string,
  context: EventBatchMessage['context'],
  events: StreamEvent[],
): EventBatchMessage => ({
  v: 1,
  batch_id: randomUUID(),
  org_id: randomUUID(),
  site_id: siteId,
  received_at: NOW,
  session_id: sessionId,
  context,
  events,
});

function batchesOf(siteId: string, plan: Plan): EventBatchMessage[] {
  const out: EventBatchMessage[] = [];
  plan.sessions.forEach((s, i) => {
    const events: StreamEvent[] = s.events.map((e) => ({
      id: randomUUID(),
      type: e.type,
      ts: NOW - s.startDaysAgo * DAY + e.at * 60_000,
      page: PAGES[e.page],
      ...(e.type === 'signal'
        ? {
            signal: e.signal,
            selector: e.page % 2 === 0 ? '#b' : undefined,
            ...(e.confidence === undefined ? {} : { meta: { confidence: e.confidence } }),
          }
        : {}),
      ...(e.type === 'conversion' ? { value: 10 } : {}),
    }));
    const size = Math.ceil(events.length / s.parts);
    for (let p = 0; p * size < events.length; p++)
      out.push(
        batchOf(
          siteId,
          `s${i}`,
          {
            device: 'desktop',
            viewport: { w: 1280, h: 800 },
            ...(s.environment === undefined ? {} : { environment: s.environment }),
          },
          events.slice(p * size, (p + 1) * size),
        ),
      );
  });
  // A session in one batch across the 31-day retention cutoff and the 30-day window's start (a row that straddles both).
  const straddle = (at: number, type: 'page_view' | 'signal', page: string, signal?: string): StreamEvent => ({
    id: randomUUID(),
    type,
    ts: at,
    page,
    ...(signal ? { signal, selector: '#s' } : {}),
  });
  out.push(
    batchOf(siteId, 'straddle', { device: 'mobile', viewport: { w: 400, h: 800 } }, [
      straddle(NOW - 32 * DAY, 'page_view', '/'),
      straddle(NOW - 32 * DAY + 60_000, 'signal', '/', 'rage_click'),
      straddle(NOW - 29 * DAY, 'page_view', '/cart'),
      straddle(NOW - 29 * DAY + 60_000, 'signal', '/cart', 'navigation_loop'),
      straddle(NOW - 29 * DAY + 120_000, 'page_view', '/checkout'),
    ]),
  );
  // Late batches: any order, so a session's later part can be stored before its earlier one.
  return out
    .map((b, i) => ({ b, k: plan.shuffle[i % plan.shuffle.length] }))
    .sort((x, y) => x.k - y.k)
    .map((x) => x.b);
}

/** Every step kept, and every raw page view and decorator signal, as comparable rows (the same multiset). */
async function assertStepsEqualRaw(db: Kysely<Database>, siteId: string): Promise<string | undefined> {
  const steps = await sql<{ r: string }>`
    select concat_ws('|', environment, session_id, at, page, type, selector, confidence) as r from (
      select j.environment, j.session_id, v.at, v.page, null as type, null as selector, null::float8 as confidence
      from journey_steps j, unnest(j.view_at, j.view_page) v(at, page) where j.site_id = ${siteId}
      union all
      select j.environment, j.session_id, g.at, g.page, g.type, g.selector, g.confidence
      from journey_steps j, unnest(j.signal_at, j.signal_page, j.signal_type, j.signal_selector, j.signal_confidence)
        g(at, page, type, selector, confidence) where j.site_id = ${siteId}) x
`.execute(db);
  const raw = await sql<{ r: string }>`
    select concat_ws('|', case when environment = 'staging' then 'staging' else 'production' end, session_id,
                     (extract(epoch from ts) * 1000000)::bigint, page, signal, selector,
                     case when type = 'signal' and jsonb_typeof(meta->'confidence') = 'number' then (meta->>'confidence')::float8 end) as r
    from events
    where site_id = ${siteId} and (type = 'page_view' or (type = 'signal' and signal in (${sql.join([...JOURNEY_SIGNAL_TYPES])})))
`.execute(db);
  const a = steps.rows.map((r) => r.r).sort();
  const b = raw.rows.map((r) => r.r).sort();
  return isDeepStrictEqual(a, b) ? undefined : `steps ${JSON.stringify(a)} ≠ raw ${JSON.stringify(b)}`;
}

/** The route's answers from the steps against the answers from the raw events; the first difference, if any. */
async function answersDiffer(db: Kysely<Database>, siteId: string, questions: Question[]): Promise<string | undefined> {
  for (const { at, ...rest } of [BROADEST, ...questions]) {
    const q: JourneyQuery = { site_id: siteId, ...rest };
    const got = await journeyFriction(db, q, new Date(at));
    const want = await journeyFrictionFromEvents(db, q, new Date(at), true);
    if (!isDeepStrictEqual(got, want))
      return `${JSON.stringify({ ...q, at })}: ${JSON.stringify(got)} ≠ ${JSON.stringify(want)}`;
  }
  return (await assertStepsEqualRaw(db, siteId)) ?? undefined;
}

for (const name of ['postgres', 'pglite'] as const) {
  test(`${name}: the journeys answer from journey_steps equals the answer from the raw events, after redelivery, erasure, retention and a rebuild`, async (t) => {
    t.timeout(600_000);
    const fixture = name === 'postgres' ? await withTestDatabase('journeys_rollup') : undefined;
    const handle = fixture?.handle ?? (await openEmbeddedTestDatabase());
    t.teardown(() => (fixture ? fixture.close() : handle.close()));
    const { db, bulk } = handle;
    const orgId = await insertOrg(db, { name: 'journeys' });
    let withEdges = 0;
    let straddling = 0;
    let lastFailure = '';
    const run = fc.assert(
      fc.asyncProperty(planArb, async (plan) => {
        const { siteId } = await provisionSite(db, { orgId, name: 'j', url: 'https://j.example' });
        const batches = batchesOf(siteId, plan);
        const doubts = new InDoubtEvents();
        for (let i = 0; i < batches.length; i += 3)
          await storeBatch(bulk, deriveNothing, batches.slice(i, i + 3), doubts);
        // Redelivery: nothing is appended twice.
        const again = plan.redeliver.filter((i) => i < batches.length).map((i) => batches[i]);
        if (again.length > 0) await storeBatch(bulk, deriveNothing, again, doubts);
        const fail = async (when: string) => {
          const d = await answersDiffer(db, siteId, plan.questions);
          if (d) throw new Error((lastFailure = `${when}: ${d}`));
        };
        await fail('after the batches');
        const all = await journeyFriction(
          db,
          { site_id: siteId, environment: 'production', limit: 1000, min_friction_weight: 0 },
          new Date(NOW),
        );
        if (all.edges.some((e) => e.sessions > 0)) withEdges++;
        // Erasure of some sessions.
        await db.transaction().execute((trx) => eraseSessions(trx, siteId, ['s0', 's3']));
        await fail('after erasure');
        // Retention at 31 days: rows straddling the cutoff keep their newer steps.
        const cutoff = NOW - 31 * DAY;
        straddling += Number(
          (
            await sql<{ n: number }>`select count(*)::int as n from journey_steps
              where site_id = ${siteId} and first_at < ${new Date(cutoff)} and last_at >= ${new Date(cutoff)}`.execute(
              db,
            )
          ).rows[0].n,
        );
        await db.updateTable('sites').set({ retention_days: 31 }).where('id', '=', siteId).execute();
        await applySiteRetention(db, [siteId], new Date(NOW));
        await fail('after retention');
        await rebuildJourneySteps(db, siteId);
        await fail('after the rebuild');
      }),
      { numRuns: name === 'postgres' ? 25 : 12, endOnFailure: true },
    );
    await run.catch((err) => t.fail(`${lastFailure}\n${(err as Error).cause ?? err}`));
    t.true(withEdges > 5, `answers with weighted edges: ${withEdges}`);
    t.true(straddling > 0, `rows straddling the retention cutoff: ${straddling}`);
  });
}
