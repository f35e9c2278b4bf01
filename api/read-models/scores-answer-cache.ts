import { sql, type Kysely } from 'kysely';
import type { Database } from '../../shared/db/database.ts';
import type { Environment } from '../../shared/domain/deploy-verification.ts';
import { LRUCache } from 'lru-cache';
import { encodeJson, type EncodedJson } from '../../shared/http/conditional-get.ts';
import { ok } from '../../shared/http/envelope.ts';
import { inOneSnapshot } from '../../shared/db/snapshot.ts';
import { PREPARED } from '../../shared/db/prepared-reads.ts';
import { SITE_SCORE_DAYS_RETENTION_DAYS } from '../../shared/db/site-score-days.ts';
import { siteScores } from './site-scores.ts';
import { CURRENT_SCORE_WINDOW_MS } from './scores.queries.ts';
import { BASELINE_DAYS } from '../../shared/domain/score-summary.ts';

/**
 * The answer of `GET /v1/query/scores` kept encoded in this process's memory, and served again while it is exactly
 * what the route would compute now. The answer is every page of the site, twice (390 kB at 10M demo events): building,
 * encoding and hashing it cost more CPU than 8 clients on 2 cores allow for 20 ms, however it is built; a repeated
 * request now costs one indexed read.
 *
 * What the answer depends on, and how each is part of the check:
 * - The request: `site_id` and `environment`, nothing else (the query schema ignores unknown parameters). The key is
 *   (site, environment, UTC day); the site is a uuid unique across tenants and the route checks the caller may read
 *   it before anything is looked up, so no caller can reach another tenant's bytes.
 * - The stored rows: the answer reads `page_current_scores` and `site_score_days` only. Migration 0400 gives the
 *   (site, environment) a new version from a sequence in every transaction that writes rows of either table (row
 *   triggers, so every writer is covered; TRUNCATE bumps every site). A stored answer carries the version read in the
 *   same snapshot as its rows (one read-only repeatable-read transaction), and is served only when the version read
 *   now is the same value: a commit makes its rows and its version visible together, so an equal version means equal
 *   rows. (A `max(updated_at)` would not: a transaction that took its `now()` earlier can commit later.) A key with no
 *   version row is never stored.
 * - The clock: the baseline reads the 7 days before the request's UTC day (the key's day), and the pages are those
 *   whose current row's `window_start` is at most 7 days before the request's instant. A row left out at `t0` stays out
 *   for any later instant, and a row kept stays until 7 days after its `window_start`: so the pages are the same for
 *   every instant from `t0` (the computation's) to 7 days after the earliest kept `window_start` (read, floored to the
 *   millisecond the request's instant has, in the same snapshot). Outside that interval the answer is computed again.
 * - Retention: TimescaleDB (the embedded database) drops `site_score_days` chunks older than 730 days without any
 *   trigger. A stored answer is served only while its earliest baseline day is more than a day younger than that
 *   retention by the database's own clock (read with the version), so no chunk it read can have been dropped since.
 *
 * Bounded by bytes (lru-cache's `maxSize`): 32 MiB by default, about 80 answers of a 2,000-page site; the least recently used go
 * first. Each API process keeps its own (they all check the same version).
 */
export const SCORES_ANSWER_CACHE_BYTES = 32 * 1024 * 1024;

const DAY_MS = 86_400_000;

interface StoredAnswer {
  /** score_answer_versions.version, as text. */
  version: string;
  /** The request instants (epoch ms) the answer holds for: [from, until]. */
  from: number;
  until: number;
  /** Epoch ms of the first baseline day read. */
  firstDay: number;
  body: EncodedJson;
}

/** How a request was answered (tests and measurements). */
export type AnswerSource = 'stored' | 'computed';

export class ScoresAnswerCache {
  private readonly lru: LRUCache<string, StoredAnswer>;
  /** Answers served from memory and computed, since start. */
  readonly counts = { stored: 0, computed: 0 };

  constructor(maxBytes = SCORES_ANSWER_CACHE_BYTES) {
    // The key and the bookkeeping around an entry weigh a few hundred bytes beside its body.
    // An answer larger than the whole bound is not stored (lru-cache's maxEntrySize defaults to maxSize).
    this.lru = new LRUCache({
      maxSize: maxBytes,
      sizeCalculation: (a) => a.body.json.length + a.body.etag.length + 256,
    });
  }

  get bytes(): number {
    return this.lru.calculatedSize;
  }

  get size(): number {
    return this.lru.size;
  }

  /** The encoded answer (envelope included) of the site's scores at `at`, and where it came from. */
  async answer(
    db: Kysely<Database>,
    siteId: string,
    environment: Environment,
    at: Date,
  ): Promise<{ body: EncodedJson; source: AnswerSource }> {
    const now = at.getTime();
    const key = `${siteId}/${environment}/${at.toISOString().slice(0, 10)}`;
    const stored = this.lru.get(key);
    if (stored !== undefined && now >= stored.from && now <= stored.until) {
      const { rows } = await sql<{ version: string | null; db_now: number }>`${PREPARED}
        select (select version::text from score_answer_versions where site_id = ${siteId} and environment = ${environment}) as version,
               (extract(epoch from now()) * 1000)::float8 as db_now`.execute(db);
      const current = rows[0];
      if (current?.version === stored.version && retentionKeeps(stored.firstDay, current.db_now)) {
        this.counts.stored++;
        return { body: stored.body, source: 'stored' };
      }
    }
    const computed = await inOneSnapshot(db, async (trx) => {
      // The version first: the snapshot is taken by the transaction's first statement, and every read below shares it.
      const { rows } = await sql<{ version: string | null; db_now: number; earliest: number | null }>`
        select (select version::text from score_answer_versions where site_id = ${siteId} and environment = ${environment}) as version,
               (extract(epoch from now()) * 1000)::float8 as db_now,
               (select floor(extract(epoch from min(window_start)) * 1000)::float8 from page_current_scores
                where site_id = ${siteId} and environment = ${environment}
                  and window_start >= ${new Date(now - CURRENT_SCORE_WINDOW_MS)}) as earliest`.execute(trx);
      const site = await siteScores(trx, siteId, environment, at);
      // The spec names the payload "a site object": it is served both as `data` itself and as `data.site`.
      return { state: rows[0], body: encodeJson(ok({ ...site, site })) };
    });
    this.counts.computed++;
    const { state, body } = computed;
    const firstDay = Date.parse(at.toISOString().slice(0, 10)) - BASELINE_DAYS * DAY_MS;
    if (state?.version != null && retentionKeeps(firstDay, state.db_now))
      this.lru.set(key, {
        version: state.version,
        from: now,
        until: state.earliest === null ? Number.POSITIVE_INFINITY : state.earliest + CURRENT_SCORE_WINDOW_MS,
        firstDay,
        body,
      });
    return { body, source: 'computed' };
  }
}

/** No `site_score_days` chunk holding `firstDay` or later can have been dropped by the database's clock `dbNow`. */
function retentionKeeps(firstDay: number, dbNow: number): boolean {
  return firstDay - DAY_MS >= dbNow - SITE_SCORE_DAYS_RETENTION_DAYS * DAY_MS;
}
