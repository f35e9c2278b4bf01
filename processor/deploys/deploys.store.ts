import { sql, type Kysely, type NotNull, type Selectable, type Transaction } from 'kysely';
import type { Database } from '../../shared/db/database.ts';
import type { DeployCohort, DeployTable } from '../../shared/db/tables/deploys.table.ts';
import { DISPERSION_BUCKET_MS, type Environment } from '../../shared/domain/deploy-verification.ts';
import { environmentWhere } from '../../shared/db/environment.ts';
import { epochMs, intCount } from '../../shared/db/sql.ts';

type Db = Kysely<Database> | Transaction<Database>;
export type DeployRow = Selectable<DeployTable>;

/** Deploys of these sites still being measured (not frozen) or with verification looks left (recorded within `lookHorizonMs`). */
export async function loadActiveDeploys(
  db: Db,
  siteIds: readonly string[],
  now: number,
  lookHorizonMs: number,
): Promise<DeployRow[]> {
  if (siteIds.length === 0) return [];
  return db
    .selectFrom('deploys')
    .selectAll()
    .where('site_id', 'in', [...siteIds])
    .where((eb) => eb.or([eb('frozen_at', 'is', null), eb('recorded_at', '>=', new Date(now - lookHorizonMs))]))
    .orderBy('recorded_at')
    .execute();
}

/** The deploy row locked for this transaction (several processors never measure one deploy at once). */
export async function lockDeploy(trx: Transaction<Database>, id: string): Promise<DeployRow | undefined> {
  return trx.selectFrom('deploys').selectAll().where('id', '=', id).forUpdate().skipLocked().executeTakeFirst();
}

/** Recorded time (ms) of the next deploy of the same site and environment, or null. */
export async function nextDeployAt(db: Db, d: DeployRow): Promise<number | null> {
  const r = await db
    .selectFrom('deploys')
    .select('recorded_at')
    .where('site_id', '=', d.site_id)
    .where('environment', '=', d.environment)
    .where('recorded_at', '>', d.recorded_at)
    .orderBy('recorded_at')
    .limit(1)
    .executeTakeFirst();
  return r ? r.recorded_at.getTime() : null;
}

/**
 * Which events count: one environment, a time range, optionally one app version. Staging is exactly
 * `context.environment = 'staging'`; everything else is production, as the engine folds it (environmentWhere).
 */
export interface TrafficScope {
  siteId: string;
  environment: Environment;
  from: number;
  to: number;
  appVersion?: string;
  /** Only sessions reporting a version other than this one (the old releases still in use: the concurrent control). */
  otherThanVersion?: string;
}

/** The events in scope, to select from. */
const eventsInScope = (db: Db, s: TrafficScope) =>
  db
    .selectFrom('events')
    .where('site_id', '=', s.siteId)
    .where('ts', '>=', new Date(s.from))
    .where('ts', '<', new Date(s.to))
    .where(environmentWhere(s.environment))
    .$if(s.appVersion !== undefined, (q) => q.where('app_version', '=', s.appVersion as string))
    .$if(s.otherThanVersion !== undefined, (q) =>
      q.where('app_version', 'is not', null).where('app_version', '<>', s.otherThanVersion as string),
    );

/** Distinct sessions in scope. */
async function countSessions(db: Db, s: TrafficScope): Promise<number> {
  const r = await eventsInScope(db, s)
    .select((eb) => intCount(eb.fn.count('session_id').distinct()).as('n'))
    .executeTakeFirst();
  return r?.n ?? 0;
}

/** Sessions in scope that report `version` (the release-aware cohort exists when there are any). */
export async function countVersionSessions(db: Db, s: TrafficScope, version: string): Promise<number> {
  return countSessions(db, { ...s, appVersion: version });
}

/** What the score reads of each page in scope, with the first and last event time and the distinct sessions. */
export async function pageTraffic(db: Db, s: TrafficScope) {
  const rows = await eventsInScope(db, s)
    .where('type', 'in', ['page_view', 'signal'])
    .select((eb) => [
      'page',
      intCount(eb.fn.count('session_id').distinct()).as('sessions'),
      intCount(eb.fn.countAll().filterWhere('type', '=', 'page_view')).as('page_views'),
      epochMs(eb.fn.min('ts')).as('first_ms'),
      epochMs(eb.fn.max('ts')).as('last_ms'),
    ])
    .groupBy('page')
    .execute();
  const signals = await eventsInScope(db, s)
    .where('type', '=', 'signal')
    .where('signal', 'is not', null)
    .select((eb) => ['page', 'signal', intCount(eb.fn.countAll()).as('n')])
    .groupBy(['page', 'signal'])
    .$narrowType<{ signal: NotNull }>()
    .execute();
  const byPage = new Map<string, Record<string, number>>();
  for (const r of signals) byPage.set(r.page, { ...byPage.get(r.page), [r.signal]: r.n });
  return {
    pages: rows.map((r) => ({
      page: r.page,
      sessions: r.sessions,
      pageViews: r.page_views,
      signals: byPage.get(r.page) ?? {},
    })),
    firstMs: rows.length ? Math.min(...rows.map((r) => r.first_ms)) : null,
    lastMs: rows.length ? Math.max(...rows.map((r) => r.last_ms)) : null,
    sessions: await countSessions(db, s),
  };
}

/** First and last event time (ms) in scope, null when there is none: how far the cohort's traffic reaches. */
export async function trafficSpan(db: Db, s: TrafficScope): Promise<{ firstMs: number | null; lastMs: number | null }> {
  const r = await eventsInScope(db, s)
    .select((eb) => [epochMs<null>(eb.fn.min('ts')).as('first_ms'), epochMs<null>(eb.fn.max('ts')).as('last_ms')])
    .executeTakeFirst();
  return { firstMs: r?.first_ms ?? null, lastMs: r?.last_ms ?? null };
}

/** The dispersion bucket of an event (hours since the epoch: the same in every time zone). */
const HOUR_BUCKET = sql<number>`floor(extract(epoch from ts) * 1000 / ${sql.lit(DISPERSION_BUCKET_MS)})::int`;

/**
 * Each session's hour bucket on a page: the bucket of its first event there in scope. A session counts in one hour
 * only, so the hourly strata's sessions add up to the distinct sessions (a page view at 10:59:59 and its rage click at
 * 11:00:00 were one session counted in two hours).
 */
const sessionHours = (db: Db, s: TrafficScope, pages: readonly string[]) =>
  eventsInScope(db, s)
    .where('page', 'in', [...pages])
    .select(['page', 'session_id', sql<number>`min(${HOUR_BUCKET})`.as('hour')])
    .groupBy(['page', 'session_id']);

/** Sessions per page and hour bucket in scope (sessionHours): the exposure of the dispersion's hourly buckets. */
export async function hourlyPageSessions(
  db: Db,
  s: TrafficScope,
  pages: readonly string[],
): Promise<Map<string, Map<number, number>>> {
  const out = new Map<string, Map<number, number>>();
  if (pages.length === 0) return out;
  const rows = await db
    .selectFrom(sessionHours(db, s, pages).as('sh'))
    .select((eb) => ['sh.page', 'sh.hour', intCount(eb.fn.countAll()).as('n')])
    .groupBy(['sh.page', 'sh.hour'])
    .execute();
  for (const r of rows) {
    const m = out.get(r.page) ?? new Map<number, number>();
    m.set(r.hour, r.n);
    out.set(r.page, m);
  }
  return out;
}

/** Distinct sessions per page in scope (the exposure of a rate). */
export async function pageSessionCounts(
  db: Db,
  s: TrafficScope,
  pages: readonly string[],
): Promise<Map<string, number>> {
  if (pages.length === 0) return new Map();
  const rows = await eventsInScope(db, s)
    .where('page', 'in', [...pages])
    .select((eb) => ['page', intCount(eb.fn.count('session_id').distinct()).as('n')])
    .groupBy('page')
    .execute();
  return new Map(rows.map((r) => [r.page, r.n]));
}

/** The signal events in scope on these pages. */
const signalEventsInScope = (db: Db, s: TrafficScope, pages: readonly string[]) =>
  eventsInScope(db, s)
    .where('type', '=', 'signal')
    .where('signal', 'is not', null)
    .where('page', 'in', [...pages]);

/**
 * Signal events in scope on these pages, one row per (page, type, raw selector, session) with its count and the
 * session's hour bucket on the page (sessionHours: the hour it is exposed in, not the signal's own). The hours are
 * read for the sessions with a signal only (events_session_idx), not for every session of the pages.
 */
export async function signalSessions(db: Db, s: TrafficScope, pages: readonly string[]) {
  if (pages.length === 0) return [];
  const counts = signalEventsInScope(db, s, pages)
    .select((eb) => ['page', 'signal', 'selector', 'session_id', intCount(eb.fn.countAll()).as('n')])
    .groupBy(['page', 'signal', 'selector', 'session_id']);
  const hours = sessionHours(db, s, pages).where(
    'session_id',
    'in',
    signalEventsInScope(db, s, pages).select('session_id'),
  );
  return db
    .selectFrom(counts.as('g'))
    .innerJoin(hours.as('sh'), (j) => j.onRef('sh.page', '=', 'g.page').onRef('sh.session_id', '=', 'g.session_id'))
    .select(['g.page', 'g.signal', 'g.selector', 'g.session_id', 'sh.hour', 'g.n'])
    .$narrowType<{ signal: NotNull }>()
    .execute();
}

export async function saveMeasurement(
  db: Db,
  id: string,
  m: {
    confusionAfter: number | null;
    delta: number | null;
    cohort: DeployCohort | null;
    measuredUntil: number;
    frozenAt: number | null;
  },
): Promise<void> {
  await db
    .updateTable('deploys')
    .set({
      confusion_after: m.confusionAfter,
      delta: m.delta,
      cohort: m.cohort === null ? null : JSON.stringify(m.cohort),
      measured_until: new Date(m.measuredUntil),
      frozen_at: m.frozenAt === null ? null : new Date(m.frozenAt),
    })
    .where('id', '=', id)
    .execute();
}

export async function markLookDone(db: Db, id: string, look: string): Promise<void> {
  await db
    .updateTable('deploys')
    .set((eb) => ({ looks_done: eb.fn<string[]>('array_append', ['looks_done', eb.val(look)]) }))
    .where('id', '=', id)
    .execute();
}

/**
 * Issues of the deploy's environment a look tests, locked for the transaction: open ones first seen before the
 * deploy (fixed by it? an issue born after it cannot have been), ones closed before the deploy (back after it?) and
 * ones this deploy verified that are still verified (back since the fix?).
 */
export async function loadLookIssues(
  trx: Transaction<Database>,
  deployId: string,
  siteId: string,
  environment: string,
  recordedAt: Date,
) {
  return trx
    .selectFrom('ux_issues')
    .select([
      'id',
      'page',
      'cluster_selector',
      'signal_type',
      'status',
      'frozen',
      'title',
      'resolved_at',
      'signal_count',
      'affected_sessions',
      'severity',
      'selector',
    ])
    .where('site_id', '=', siteId)
    .where('environment', '=', environment as Environment)
    .where('merged_into', 'is', null)
    .where((eb) =>
      eb.or([
        eb.and([eb('status', 'in', ['open', 'triaged', 'in_progress']), eb('first_signal_at', '<', recordedAt)]),
        eb.and([eb('status', 'in', ['resolved', 'verified', 'regressed']), eb('resolved_at', '<', recordedAt)]),
        eb.and([
          eb('status', '=', 'verified'),
          eb('resolved_at', '>=', recordedAt),
          eb.exists(
            eb
              .selectFrom('deploy_verifications as v')
              .select('v.id')
              .where('v.deploy_id', '=', deployId)
              .whereRef('v.issue_id', '=', 'ux_issues.id')
              .where('v.result', '=', 'verified'),
          ),
        ]),
      ]),
    )
    .orderBy('id')
    .forUpdate()
    .execute();
}

/** When the issue last became `regressed` (engine or deploy), or null. */
export async function lastRegressedAt(db: Db, issueId: string): Promise<number | null> {
  const r = await db
    .selectFrom('issue_updates')
    .select('created_at')
    .where('issue_id', '=', issueId)
    .where('kind', '=', 'regressed')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
  return r ? r.created_at.getTime() : null;
}

/** Issues of this deploy that already got a `regressed` record (one per deploy is enough). */
export async function regressedIssueIds(db: Db, deployId: string): Promise<Set<string>> {
  const rows = await db
    .selectFrom('deploy_verifications')
    .select('issue_id')
    .where('deploy_id', '=', deployId)
    .where('result', '=', 'regressed')
    .execute();
  return new Set(rows.map((r) => r.issue_id));
}

export interface VerificationWrite {
  deployId: string;
  issueId: string;
  siteId: string;
  look: string;
  test: 'fix' | 'regression';
  result: string;
  signalCountBefore: number;
  signalCountAfter: number;
  affectedBefore: number;
  affectedAfter: number;
  sessionsBefore: number;
  sessionsAfter: number;
  pValue: number | null;
  alpha: number;
  at: number;
  control: 'concurrent' | 'before_window';
}

export async function insertVerifications(db: Db, rows: readonly VerificationWrite[]): Promise<void> {
  if (rows.length === 0) return;
  await db
    .insertInto('deploy_verifications')
    .values(
      rows.map((r) => ({
        deploy_id: r.deployId,
        issue_id: r.issueId,
        site_id: r.siteId,
        look: r.look,
        test: r.test,
        result: r.result,
        signal_count_before: r.signalCountBefore,
        signal_count_after: r.signalCountAfter,
        affected_before: r.affectedBefore,
        affected_after: r.affectedAfter,
        sessions_before: r.sessionsBefore,
        sessions_after: r.sessionsAfter,
        p_value: r.pValue,
        alpha: r.alpha,
        verified_at: new Date(r.at),
        control: r.control,
      })),
    )
    .onConflict((oc) => oc.columns(['deploy_id', 'issue_id', 'look']).doNothing())
    .execute();
}

/** Links issues of its environment first seen after a deploy (and before the next one of it, within `horizonMs`) to it. */
export async function linkIntroducedIssues(
  db: Db,
  d: DeployRow,
  nextAt: number | null,
  horizonMs: number,
): Promise<number> {
  const end = Math.min(nextAt ?? Number.POSITIVE_INFINITY, d.recorded_at.getTime() + horizonMs);
  const r = await db
    .updateTable('ux_issues')
    .set({ introduced_by_deploy: d.id })
    .where('site_id', '=', d.site_id)
    .where('environment', '=', d.environment as Environment)
    .where('introduced_by_deploy', 'is', null)
    .where('first_signal_at', '>=', d.recorded_at)
    .where('created_at', '>=', d.recorded_at)
    .where('first_signal_at', '<', new Date(end))
    .executeTakeFirst();
  return Number(r.numUpdatedRows);
}
