import { sql, type Kysely } from 'kysely';
import type { Database } from '../shared/db/database.ts';
import type { Logger } from '../shared/logger.ts';
import type { EngineEvent } from './engine/events.ts';
import { recomputeSite, type SiteSnapshot } from './engine/recompute.ts';
import { clusterKeyString } from './engine/clustering.ts';
import { clusterWindowStart } from './engine/time.ts';
import { ScoreKeeper } from './scoring/score-keeper.ts';
import { IssueKeeper } from './issues/issue-keeper.ts';
import { environmentWhere } from '../shared/db/environment.ts';
import { engineEventOf } from './store/engine-rows.ts';
import type { Environment } from '../shared/domain/deploy-verification.ts';

export interface RecomputeReport {
  siteId: string;
  environment: Environment;
  rows: number;
  pages: { checked: number; differing: string[] };
  issues: { expected: number; differing: string[] };
  elements: { expected: number; differing: string[] };
  written: boolean;
}

/** The stored rows the engine reads of one environment (page views and signals of the cluster window), oldest first. */
export async function loadEngineRows(
  db: Kysely<Database>,
  siteId: string,
  since: number,
  environment: Environment = 'production',
): Promise<EngineEvent[]> {
  const rows = await db
    .selectFrom('events')
    .select(['id', 'session_id', 'type', 'ts', 'page', 'signal', 'selector', 'label'])
    .where('site_id', '=', siteId)
    .where('ts', '>=', new Date(since))
    .where('type', 'in', ['page_view', 'signal'])
    .where(environmentWhere(environment))
    .execute();
  return rows.map((r) => engineEventOf(siteId, r));
}

/** Compares what is stored with a from-scratch recomputation over the raw rows. */
async function compare(
  db: Kysely<Database>,
  snap: SiteSnapshot,
  environment: Environment,
): Promise<Omit<RecomputeReport, 'rows' | 'written'>> {
  const scores = await db
    .selectFrom('page_scores')
    .distinctOn('page')
    .select(['page', sql<number>`score::float8`.as('score'), 'sessions'])
    .where('site_id', '=', snap.siteId)
    .where('environment', '=', environment)
    .orderBy('page')
    .orderBy('window_start', 'desc')
    .execute();
  const stored = new Map(scores.map((r) => [r.page, r]));
  const pageDiffs: string[] = [];
  for (const p of snap.pages) {
    const s = stored.get(p.page);
    // Stored scores used the site mean of the moment they were written; sessions must match exactly.
    if (!s || s.sessions !== p.stats.sessions || Math.abs(s.score - p.score) > 0.05)
      pageDiffs.push(
        `${p.page}: stored ${s ? `${s.score} (${s.sessions} sessions)` : 'none'}, recomputed ${p.score} (${p.stats.sessions} sessions)`,
      );
  }
  const issues = await db
    .selectFrom('ux_issues')
    .select(['page', 'cluster_selector', 'signal_type', 'signal_count', 'affected_sessions', 'status'])
    .where('site_id', '=', snap.siteId)
    .where('environment', '=', environment)
    .execute();
  const byKey = new Map(
    issues.map((i) => [
      clusterKeyString({ siteId: snap.siteId, page: i.page, selector: i.cluster_selector, signalType: i.signal_type }),
      i,
    ]),
  );
  const issueDiffs: string[] = [];
  for (const c of snap.clusters) {
    const i = byKey.get(clusterKeyString(c.key));
    const expected = snap.issues.some((d) => clusterKeyString(d.key) === clusterKeyString(c.key));
    if (!i && expected) issueDiffs.push(`${c.key.page} ${c.key.selector} ${c.key.signalType}: missing issue`);
    else if (i && (i.signal_count !== c.signalCount || i.affected_sessions !== c.affectedSessions)) {
      issueDiffs.push(
        `${c.key.page} ${c.key.selector} ${c.key.signalType}: stored ${i.signal_count}/${i.affected_sessions}, recomputed ${c.signalCount}/${c.affectedSessions}`,
      );
    }
  }
  const elements = await db
    .selectFrom('page_elements')
    .select(['page', 'cluster_selector', 'signal_count', 'affected_users'])
    .where('site_id', '=', snap.siteId)
    .where('environment', '=', environment)
    .execute();
  const elByKey = new Map(elements.map((e) => [`${e.page}\u0000${e.cluster_selector}`, e]));
  const elementDiffs: string[] = [];
  for (const e of snap.elements) {
    const s = elByKey.get(`${e.page}\u0000${e.canonicalSelector}`);
    if (!s || s.signal_count !== e.signalCount || s.affected_users !== e.affectedUsers)
      elementDiffs.push(
        `${e.page} ${e.canonicalSelector}: stored ${s ? `${s.signal_count}/${s.affected_users}` : 'none'}, recomputed ${e.signalCount}/${e.affectedUsers}`,
      );
  }
  return {
    siteId: snap.siteId,
    environment,
    pages: { checked: snap.pages.length, differing: pageDiffs },
    issues: { expected: snap.issues.length, differing: issueDiffs },
    elements: { expected: snap.elements.length, differing: elementDiffs },
  };
}

/**
 * `friction recompute --site <id> [--environment staging] [--write]`: recomputes a site's scores, issues and elements
 * of one environment (production unless named) from its stored raw rows, reports every difference with what is stored, and with `write` rewrites the derived rows through the
 * processor's own code path (run it with the site's processor stopped, or its next batch rewrites the pages it touches).
 */
export async function recomputeSiteCommand(
  db: Kysely<Database>,
  siteId: string,
  now: number,
  write: boolean,
  log: Logger,
  environment: Environment = 'production',
): Promise<RecomputeReport> {
  const rows = await loadEngineRows(db, siteId, clusterWindowStart(now), environment);
  const snapshot = recomputeSite(rows, siteId, now);
  if (write) {
    const scores = new ScoreKeeper({ log, environment });
    const issues = new IssueKeeper({ log, environment });
    await scores.rebuild(db, [siteId], now);
    await issues.rebuild(db, [siteId], now);
    await db.transaction().execute(async (trx) => {
      await scores.rescoreSite(trx, siteId, now);
      await issues.reconcileSite(trx, siteId, now, (s, p) => scores.pageSessions(s, p, now));
    });
  }
  return { ...(await compare(db, snapshot, environment)), rows: rows.length, written: write };
}
