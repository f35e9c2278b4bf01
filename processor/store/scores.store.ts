import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../../shared/db/database.ts';
import { isoDay, jsonbRows } from '../../shared/db/sql.ts';
import { engineEventOf } from './engine-rows.ts';
import { keysetPages, pageAfter, tsKey } from './keyset-pages.ts';
import { environmentOf, type Environment } from '../../shared/domain/deploy-verification.ts';
import { environmentWhere } from '../../shared/db/environment.ts';
import { liveSites } from '../../shared/db/queries/sites.queries.ts';
import { refreshSiteScoreDays } from '../../shared/db/site-score-days.ts';

type Db = Kysely<Database> | Transaction<Database>;

export interface PageScoreWrite {
  siteId: string;
  page: string;
  /** Hour bucket start the score belongs to (epoch ms). */
  windowStart: number;
  /** UTC day of `score_history` (YYYY-MM-DD). */
  day: string;
  score: number;
  friction: number;
  sessions: number;
  pageViews: number;
  signalCount: number;
  dominantSignal: string | null;
  trend: string;
  updatedAt: number;
}

/**
 * Writes absolute values (never increments): the hour row of `page_scores` and the day row of `score_history`
 * hold the page's latest score, so rewriting them after a redelivery or a restart is harmless. The site's days those
 * rows are on are recomputed in `site_score_days` in the same transaction (one is opened when the caller has none).
 */
export async function upsertPageScores(
  db: Db,
  environment: Environment,
  rows: readonly PageScoreWrite[],
): Promise<void> {
  if (rows.length === 0) return;
  if (!db.isTransaction) return db.transaction().execute((trx) => upsertPageScores(trx, environment, rows));
  // One document for both statements; the day as its YYYY-MM-DD text.
  const doc = jsonbRows(
    rows.map((r) => [
      r.siteId,
      r.page,
      r.windowStart,
      r.day,
      r.score,
      r.friction,
      r.sessions,
      r.pageViews,
      r.signalCount,
      r.dominantSignal,
      r.trend,
      r.updatedAt,
    ]),
  );
  await sql`
    insert into page_scores (environment, site_id, page, window_start, score, friction, sessions, page_views, signal_count, dominant_signal, trend, updated_at)
    select ${environment}, (r->>0)::uuid, r->>1, to_timestamp((r->>2)::float8 / 1000), (r->>4)::real, (r->>5)::real, (r->>6)::int,
      (r->>7)::int, (r->>8)::int, r->>9, r->>10, to_timestamp((r->>11)::float8 / 1000)
    from ${doc}
    on conflict (site_id, environment, page, window_start) do update set
      score = excluded.score, friction = excluded.friction, sessions = excluded.sessions, page_views = excluded.page_views,
      signal_count = excluded.signal_count, dominant_signal = excluded.dominant_signal, trend = excluded.trend, updated_at = excluded.updated_at`.execute(
    db,
  );
  await sql`
    insert into score_history (environment, site_id, page, day, score, sessions, page_views, signal_count, dominant_signal, updated_at)
    select ${environment}, (r->>0)::uuid, r->>1, (r->>3)::date, (r->>4)::real, (r->>6)::int, (r->>7)::int, (r->>8)::int, r->>9,
      to_timestamp((r->>11)::float8 / 1000)
    from ${doc}
    on conflict (site_id, environment, page, day) do update set
      score = excluded.score, sessions = excluded.sessions, page_views = excluded.page_views, signal_count = excluded.signal_count,
      dominant_signal = excluded.dominant_signal, updated_at = excluded.updated_at`.execute(db);
  await refreshSiteScoreDays(
    db,
    rows.map((r) => ({ siteId: r.siteId, environment, day: r.day })),
  );
}

/** Daily page scores of the given sites over the 7 days before `today` (trend baselines). */
export async function loadScoreHistory(
  db: Db,
  environment: Environment,
  siteIds: readonly string[],
  today: string,
): Promise<{ siteId: string; page: string; date: string; score: number }[]> {
  if (siteIds.length === 0) return [];
  return db
    .selectFrom('score_history')
    .select(['site_id as siteId', 'page', isoDay('day').as('date'), sql<number>`score::float8`.as('score')])
    .where('site_id', 'in', [...siteIds])
    .where('environment', '=', environment)
    .where('day', '<', today)
    .where('day', '>=', sql<string>`${today}::date - 7`)
    .execute();
}

/**
 * Page views and signals since `since` of one site and environment (`any`: both, each row saying which): what rebuilds
 * the in-memory windows after a restart. The processor reads both at once, so a site without staging traffic costs
 * one scan of its window, not two.
 */
export async function* loadWindowEvents(
  db: Db,
  siteId: string,
  environment: Environment | 'any',
  since: number,
  chunkRows = REBUILD_CHUNK_ROWS,
): AsyncGenerator<
  {
    id: string;
    siteId: string;
    sessionId: string;
    type: 'page_view' | 'signal';
    ts: number;
    page: string;
    signal?: string;
    environment: Environment;
  }[]
> {
  const pages = keysetPages(
    chunkRows,
    (after) =>
      db
        .selectFrom('events')
        .select(['id', 'session_id', 'type', 'ts', tsKey(), 'page', 'signal', 'environment'])
        .where('site_id', '=', siteId)
        .where('ts', '>=', new Date(since))
        .where('type', 'in', ['page_view', 'signal'])
        .$if(environment !== 'any', (q) => q.where(environmentWhere(environment as Environment)))
        .$call((q) => pageAfter(q, 'id', after, chunkRows))
        .execute(),
    (r) => r.id,
  );
  for await (const rows of pages)
    yield rows.map((r) => ({ ...engineEventOf(siteId, r), environment: environmentOf(r.environment) }));
}

/** Rows per page of the start-up rebuild reads. */
export const REBUILD_CHUNK_ROWS = 20_000;

/** Ids of every live site (the processor keeps those of its partitions; deleted sites take no more traffic). */
export async function listSiteIds(db: Db): Promise<string[]> {
  return (await liveSites(db).select('id').execute()).map((r) => r.id);
}
