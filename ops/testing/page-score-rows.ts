/** Test-only: hourly `page_scores` rows as the processor writes them (the rollup and answer-cache tests). */
import type { Kysely } from 'kysely';
import type { Database } from '../../shared/db/database.ts';
import type { Environment } from '../../shared/domain/deploy-verification.ts';
import { seeded } from '../../shared/seeded-random.ts';
import { upsertPageScores, type PageScoreWrite } from '../../processor/store/scores.store.ts';
import { provisionSite } from '../../shared/tenancy/provision.ts';

const HOUR = 3_600_000;

/**
 * Hourly rows of `pages` over the 9 days before the hour `from` (two before the 7-day window), some hours skipped, from
 * a seed; the page `/ü` has only the two oldest days (a page out of the window).
 */
export function hourlyScoreRows(
  siteId: string,
  seed: number,
  pages: readonly string[],
  from: number,
): PageScoreWrite[] {
  const rand = seeded(seed);
  const rows: PageScoreWrite[] = [];
  for (const page of pages)
    for (let h = page === '/ü' ? 8 * 24 : 0; h < 9 * 24; h += 1 + Math.floor(rand() * 30)) {
      const windowStart = from - h * HOUR;
      rows.push({
        siteId,
        page,
        windowStart,
        day: new Date(windowStart).toISOString().slice(0, 10),
        score: rand() * 100,
        friction: rand(),
        sessions: Math.floor(rand() * 50),
        pageViews: 1,
        signalCount: 1,
        dominantSignal: rand() < 0.3 ? null : 'rage_click',
        trend: ['up', 'down', 'stable'][Math.floor(rand() * 3)],
        updatedAt: windowStart + 1000,
      });
    }
  return rows;
}

/** As the processor writes them: one statement (and transaction) per hour. */
export async function writeHourly(db: Kysely<Database>, environment: Environment, rows: readonly PageScoreWrite[]) {
  for (const hour of [...new Set(rows.map((r) => r.windowStart))].sort((a, b) => a - b))
    await upsertPageScores(
      db,
      environment,
      rows.filter((r) => r.windowStart === hour),
    );
}

/**
 * The two-site fixture both tests start from: `pages` in production and two of them in staging for a new site, and
 * `/` and `/other` in production for a second site of the same organization (so answers must stay per site).
 */
export async function writeTwoSites(
  db: Kysely<Database>,
  orgId: string,
  pages: readonly string[],
  from: number,
): Promise<{ siteId: string; other: string }> {
  const { siteId } = await provisionSite(db, { orgId, name: 'a', url: 'https://a.example' });
  const { siteId: other } = await provisionSite(db, { orgId, name: 'b', url: 'https://b.example' });
  await writeHourly(db, 'production', hourlyScoreRows(siteId, 1, pages, from));
  await writeHourly(db, 'staging', hourlyScoreRows(siteId, 2, ['/', '/cart'], from));
  await writeHourly(db, 'production', hourlyScoreRows(other, 3, ['/', '/other'], from));
  return { siteId, other };
}
