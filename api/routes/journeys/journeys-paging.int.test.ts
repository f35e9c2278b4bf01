import test from 'ava';
import { sql } from 'kysely';
import type { DatabaseHandle } from '../../../shared/db/connection.ts';
import { environmentWhere } from '../../../shared/db/environment.ts';
import type { Environment } from '../../../shared/domain/deploy-verification.ts';
import { withTestDatabase } from '../../../shared/testing/database.ts';
import { seeded } from '../../../shared/seeded-random.ts';
import { journeySessions } from './journeys.queries.ts';
import { rebuildJourneySteps } from '../../../shared/db/journey-steps.ts';
import { openEmbeddedTestDatabase } from '../../../shared/testing/embedded-template.ts';

// journeySessions reads sessions a page at a time (newest first, keyset on activity and id); the answer must be the
// single statement it replaced: the `limit` most recently active sessions of the window with a signal of the types
// in the window, in (last_seen_at desc, id) order. Over pages: ties on the activity time (microseconds), sessions
// whose signals are of other types, outside the window or in the other environment, and sessions without signals.

const NOW = new Date('2026-03-15T12:00:00.000Z');
const SITE = '00000000-0000-4000-8000-000000000001';
// Two edge decorators (the only signals journey_steps keeps).
const TYPES = ['rage_click', 'form_abandon'];

async function fill(handle: DatabaseHandle) {
  const rnd = seeded(11);
  const sessions: Record<string, unknown>[] = [];
  const events: Record<string, unknown>[] = [];
  for (let i = 0; i < 900; i++) {
    const id = `s-${String(i).padStart(4, '0')}`;
    // Many ties: 300 distinct activity times (with microseconds) over 40 days.
    const lastMicros = NOW.getTime() * 1000 - Math.floor(rnd() * 300) * 11_520_000_007;
    const last = sql<Date>`timestamptz 'epoch' + ${String(lastMicros)}::bigint * interval '1 microsecond'`;
    const environment = rnd() < 0.2 ? 'staging' : rnd() < 0.5 ? null : 'production';
    const kind = rnd();
    // 0.35 a signal of the types; 0.15 only another type; 0.1 a signal of the types 31+ days before its last activity
    let signals = 0;
    const add = (type: string, signal: string | null, ageMs: number) => {
      if (type === 'signal') signals++;
      events.push({
        site_id: SITE,
        id: crypto.randomUUID(),
        ts: sql`${last} - ${ageMs} * interval '1 millisecond'`,
        received_at: NOW,
        session_id: id,
        type,
        page: '/p',
        signal,
        device: 'desktop',
        environment,
      });
    };
    add('page_view', null, 60_000);
    if (kind < 0.35) add('signal', TYPES[i % 2], 0);
    else if (kind < 0.5) add('signal', 'copy_text', 0);
    else if (kind < 0.6) add('signal', 'rage_click', 31 * 86_400_000);
    sessions.push({
      site_id: SITE,
      id,
      started_at: sql`${last} - interval '1 hour'`,
      last_seen_at: last,
      device: 'desktop',
      environment,
      first_page: '/p',
      last_page: '/p',
      event_count: 1 + signals,
      page_views: 1,
      signal_count: signals,
    });
  }
  for (let i = 0; i < sessions.length; i += 200)
    await handle.db
      .insertInto('sessions')
      .values(sessions.slice(i, i + 200) as never)
      .execute();
  for (let i = 0; i < events.length; i += 200)
    await handle.db
      .insertInto('events')
      .values(events.slice(i, i + 200) as never)
      .execute();
  // The events went in around the processor: the route's steps are built from them as the migration builds them.
  await rebuildJourneySteps(handle.db);
}

/** How many of the first `n` sessions journeySessions considers (signal_count > 0) match: under `limit`, it reads another page. */
async function firstPageMatches(handle: DatabaseHandle, environment: Environment, n: number, want: string[]) {
  const since = new Date(NOW.getTime() - 30 * 86_400_000);
  const { rows } = await sql<{ id: string }>`
    select s.id from sessions s
    where s.site_id = ${SITE} and s.last_seen_at >= ${since} and ${environmentWhere(environment, 's.environment')}
      and s.signal_count > 0
    order by s.last_seen_at desc, s.id limit ${n}`.execute(handle.db);
  return rows.filter((r) => want.includes(r.id)).length;
}

/** The single statement journeySessions replaced. */
async function reference(handle: DatabaseHandle, environment: Environment, limit: number): Promise<string[]> {
  const since = new Date(NOW.getTime() - 30 * 86_400_000);
  const { rows } = await sql<{ id: string }>`
    select s.id from sessions s
    where s.site_id = ${SITE} and s.last_seen_at >= ${since} and ${environmentWhere(environment, 's.environment')}
      and exists (select 1 from events g where g.site_id = ${SITE} and g.session_id = s.id and g.ts >= ${since}
                  and ${environmentWhere(environment, 'g.environment')} and g.type = 'signal' and g.signal = any(${TYPES}))
    order by s.last_seen_at desc, s.id limit ${limit}`.execute(handle.db);
  return rows.map((r) => r.id);
}

for (const kind of ['postgres', 'pglite'] as const) {
  test(`${kind}: paged journey sessions equal the single statement, over ties and non-matching sessions`, async (t) => {
    t.timeout(180_000);
    const fixture = kind === 'postgres' ? await withTestDatabase('journeys_paging') : undefined;
    const handle = fixture?.handle ?? (await openEmbeddedTestDatabase());
    try {
      await fill(handle);
      let exhausted = 0;
      let pages = 0;
      for (const environment of ['production', 'staging'] as const)
        for (const limit of [1, 7, 150, 260, 1000]) {
          const want = await reference(handle, environment, limit);
          const got = (await journeySessions(handle.db, { site_id: SITE, environment }, TYPES, limit, NOW)).map(
            (s) => s.id,
          );
          t.deepEqual(got, want, `${environment}, limit ${limit}`);
          if (want.length > 0 && want.length < limit) exhausted++;
          if ((await firstPageMatches(handle, environment, Math.max(limit, 100), want)) < Math.min(limit, want.length))
            pages++;
        }
      t.true(exhausted > 0, 'some answers ran out of sessions (every page read)');
      t.true(pages > 0, 'some answers needed a second page');
    } finally {
      if (fixture) await fixture.close();
      else await handle.close();
    }
  });
}
