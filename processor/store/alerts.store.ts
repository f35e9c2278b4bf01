import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../../shared/db/database.ts';
import type { Alert } from '../../shared/notify/alert.ts';
import type { TriggerType } from '../alerts/rules.ts';

type Db = Kysely<Database> | Transaction<Database>;

/**
 * The alert evaluator's reads and writes (processor/alerts/alert-evaluator.ts). Every read is set-based: one statement
 * per site (or per rule set) over all its pages, each page's facts one row of the rollups a trigger on page_scores
 * keeps (alert_page_marks, alert_page_week_hours: migration 0270) or an index range bounded by time, so a tick costs
 * the same per page whatever the history holds. Rules watch the site's production only.
 */

export interface AlertRule {
  id: string;
  site_id: string;
  name: string;
  trigger_type: TriggerType;
  threshold: number;
  cooldown_minutes: number;
  page_pattern: string | null;
}

/** Enabled rules of these sites with these triggers (read at every evaluation: a rule disabled a moment ago fires nothing). */
export async function enabledRules(
  db: Db,
  siteIds: readonly string[],
  triggers: readonly TriggerType[],
): Promise<AlertRule[]> {
  if (siteIds.length === 0) return [];
  return (await db
    .selectFrom('alert_rules')
    .select(['id', 'site_id', 'name', 'trigger_type', 'threshold', 'cooldown_minutes', 'page_pattern'])
    .where('site_id', 'in', [...siteIds])
    .where('enabled', '=', true)
    .where('trigger_type', 'in', [...triggers])
    .execute()) as AlertRule[];
}

/** The pages a site's tick evaluates, in order: scored in production since `since`, or with an alert not resolved yet. */
export async function pagesToEvaluate(db: Db, siteId: string, since: Date): Promise<string[]> {
  const rows = await db
    .selectFrom('alert_page_marks')
    .select('page')
    .where('site_id', '=', siteId)
    .where('latest_start', '>=', since)
    .union(
      db
        .selectFrom('alerts')
        .select((eb) => eb.fn.coalesce('page', eb.val('')).as('page'))
        .where('site_id', '=', siteId)
        .where('status', '!=', 'resolved')
        .where('page', 'is not', null),
    )
    .orderBy('page')
    .execute();
  return rows.map((r) => r.page);
}

export interface PageNow {
  page: string;
  score: number;
  sessions: number;
  /** The latest hour's start, epoch ms. */
  windowStart: number;
  /** The score of the hour before the latest (any age), null when the page has one hour. */
  previous: number | null;
  /** The first hour's start, epoch ms. */
  firstSeen: number;
  /** With `anomaly`: the same hour of the week, 1 to 8 weeks before the latest hour, oldest first. */
  weekly: { score: number; sessions: number }[];
  /** With `anomaly`, and only while fewer than `minWeeks` weekly samples count: the hours of the 24 before the latest. */
  last24h: { score: number; sessions: number }[];
}

/**
 * What the tick needs of each page, one row per page from the rollups page_scores' trigger keeps (migration 0270):
 * its latest hour, the hour before it, its first hour and, with `anomaly`, the anomaly baseline's samples: the same
 * hour of the week over 8 weeks (kept in the row), and the 24 hours before the latest (one index range of page_scores)
 * only for a page whose weekly samples are too few (fewer than `minWeeks` with at least `minSessions` sessions), the
 * only pages whose band uses them (a second statement, for those pages). Pages never scored in production have no row.
 * NOTE: raw SQL: a lateral join and array columns are beyond kysely's builder.
 */
export async function pageObservations(
  db: Db,
  siteId: string,
  pages: readonly string[],
  anomaly: { minWeeks: number; minSessions: number } | null,
): Promise<PageNow[]> {
  if (pages.length === 0) return [];
  // Times as epoch ms (no date text to parse per row).
  const { rows } = await sql<MarkRow>`select m.page, m.latest_score, m.latest_sessions, m.previous_score,
      (extract(epoch from m.latest_start) * 1000)::float8 as latest_ms,
      (extract(epoch from m.first_start) * 1000)::float8 as first_ms,
      ${anomaly === null ? sql`null::real[] as week_scores, null::int[] as week_sessions` : sql`m.week_scores, m.week_sessions`}
    from alert_page_marks m where m.site_id = ${siteId} and m.page = any(${[...pages]}::text[])`.execute(db);
  const zip = (scores: number[] | null, sessions: number[] | null) =>
    (scores ?? []).map((score, i) => ({ score: Number(score), sessions: sessions![i]! }));
  const out = rows.map(
    (r): PageNow => ({
      page: r.page,
      score: Number(r.latest_score),
      sessions: r.latest_sessions,
      windowStart: r.latest_ms,
      previous: r.previous_score === null ? null : Number(r.previous_score),
      firstSeen: r.first_ms,
      weekly: zip(r.week_scores, r.week_sessions),
      last24h: [],
    }),
  );
  if (anomaly === null) return out;
  // The rolling 24 h only where the band uses it: a second statement for those pages alone (none on a site with weeks
  // of history), not a lateral evaluated on every page's row.
  const thin = out.filter((p) => p.weekly.filter((x) => x.sessions >= anomaly.minSessions).length < anomaly.minWeeks);
  if (thin.length === 0) return out;
  const { rows: days } = await sql<{ page: string; day_scores: number[]; day_sessions: number[] }>`
    select m.page, d.day_scores, d.day_sessions
    from alert_page_marks m
    cross join lateral (
      select array_agg(s.score order by s.window_start) as day_scores,
             array_agg(s.sessions order by s.window_start) as day_sessions
      from page_scores s
      where s.site_id = m.site_id and s.environment = 'production' and s.page = m.page
        and s.window_start >= m.latest_start - interval '1 day' and s.window_start < m.latest_start) d
    where m.site_id = ${siteId} and m.page = any(${thin.map((p) => p.page)}::text[]) and d.day_scores is not null`.execute(
    db,
  );
  const byPage = new Map(thin.map((p) => [p.page, p]));
  for (const d of days) byPage.get(d.page)!.last24h = zip(d.day_scores, d.day_sessions);
  return out;
}

interface MarkRow {
  page: string;
  latest_score: number;
  latest_sessions: number;
  previous_score: number | null;
  latest_ms: number;
  first_ms: number;
  week_scores: number[] | null;
  week_sessions: number[] | null;
}

/** Daily production scores since `sinceDay` (YYYY-MM-DD), oldest first, per page (trend). */
export async function dailyScores(
  db: Db,
  siteId: string,
  pages: readonly string[],
  sinceDay: string,
): Promise<Map<string, number[]>> {
  const out = new Map<string, number[]>();
  if (pages.length === 0) return out;
  const rows = await db
    .selectFrom('score_history')
    .select(['page', 'score'])
    .where('site_id', '=', siteId)
    .where('environment', '=', 'production')
    .where('page', '=', (eb) => eb.fn.any(eb.val([...pages])))
    .where('day', '>=', sinceDay)
    .orderBy('page')
    .orderBy('day')
    .execute();
  for (const r of rows) (out.get(r.page) ?? out.set(r.page, []).get(r.page)!).push(Number(r.score));
  return out;
}

/**
 * Sessions of the last 24 h per page showing two or more signal types on one element (co_occurrence).
 * NOTE: raw SQL: a grouped subquery with HAVING count(distinct …) reads plainer than its builder form.
 */
export async function coOccurrenceSessions(
  db: Db,
  siteId: string,
  pages: readonly string[],
  since: Date,
): Promise<Map<string, number>> {
  if (pages.length === 0) return new Map();
  const { rows } = await sql<{ page: string; n: number }>`
    select page, count(distinct session_id)::int as n from (
      select page, session_id, selector from signals
      where site_id = ${siteId} and environment = 'production' and page = any(${[...pages]}::text[]) and ts >= ${since}
        and selector is not null
      group by page, session_id, selector having count(distinct signal_type) >= 2) s
    group by page`.execute(db);
  return new Map(rows.map((r) => [r.page, r.n]));
}

export interface StoredRuleState {
  rule_id: string;
  page: string;
  recent: string;
  consecutive: number;
  clear_since: Date | null;
  held_back_since: Date | null;
  held_back_reason: string | null;
}

/**
 * The stored memory of these rules on these pages: only pairs that are not quiet have a row (alert-evaluator.ts), so a
 * quiet site's tick reads none. The pages as a join, bounded by their first and last (a tick's chunks are ranges of
 * pages in order: each reads its range of the primary key (rule_id, page), not every state of the rules).
 */
export async function ruleStates(
  db: Db,
  ruleIds: readonly string[],
  pages: readonly string[],
): Promise<StoredRuleState[]> {
  if (ruleIds.length === 0 || pages.length === 0) return [];
  const { rows } = await sql<StoredRuleState>`
    select s.rule_id, s.page, s.recent, s.consecutive, s.clear_since, s.held_back_since, s.held_back_reason
    from alert_rule_states s join (select unnest(${[...pages]}::text[]) as page) p on p.page = s.page
    where s.rule_id = any(${[...ruleIds]}::uuid[])
      and s.page >= (select min(page) from unnest(${[...pages]}::text[]) as b(page))
      and s.page <= (select max(page) from unnest(${[...pages]}::text[]) as b(page))`.execute(db);
  return rows;
}

/**
 * Writes rule states, one statement for all of them; a row whose values did not change is not rewritten (a tick over
 * every page of a quiet site rewrites nothing). NOTE: raw SQL: an upsert from unnested column arrays with a
 * conditional DO UPDATE is beyond kysely's builder.
 */
export async function saveRuleStates(db: Db, rows: readonly StoredRuleState[], now: Date): Promise<void> {
  if (rows.length === 0) return;
  const ts = (d: Date | null) => (d === null ? null : d.toISOString());
  await sql`
    insert into alert_rule_states (rule_id, page, recent, consecutive, clear_since, held_back_since, held_back_reason, updated_at)
    select r.*, ${now} from unnest(${rows.map((r) => r.rule_id)}::uuid[], ${rows.map((r) => r.page)}::text[],
      ${rows.map((r) => r.recent)}::text[], ${rows.map((r) => r.consecutive)}::int[],
      ${rows.map((r) => ts(r.clear_since))}::timestamptz[], ${rows.map((r) => ts(r.held_back_since))}::timestamptz[],
      ${rows.map((r) => r.held_back_reason)}::text[]) as r
    on conflict (rule_id, page) do update set
      recent = excluded.recent, consecutive = excluded.consecutive, clear_since = excluded.clear_since,
      held_back_since = excluded.held_back_since, held_back_reason = excluded.held_back_reason, updated_at = excluded.updated_at
    where (alert_rule_states.recent, alert_rule_states.consecutive, alert_rule_states.clear_since,
           alert_rule_states.held_back_since, alert_rule_states.held_back_reason)
      is distinct from (excluded.recent, excluded.consecutive, excluded.clear_since, excluded.held_back_since, excluded.held_back_reason)`.execute(
    db,
  );
}

/** Deletes the rows of pairs that became quiet (no row reads as quiet). */
export async function forgetRuleStates(db: Db, rows: readonly { rule_id: string; page: string }[]): Promise<void> {
  if (rows.length === 0) return;
  await sql`delete from alert_rule_states where (rule_id, page) in (
    select * from unnest(${rows.map((r) => r.rule_id)}::uuid[], ${rows.map((r) => r.page)}::text[]))`.execute(db);
}

export interface LastAlert {
  rule_id: string;
  page: string;
  id: string;
  status: string;
  triggered_at: Date;
}

/**
 * The latest alert of each (rule, page) that still matters: open ones whatever their age, and those fired since
 * `firedSince` (the longest cooldown of the rules: an older firing no longer holds a rule back).
 */
export async function lastAlerts(
  db: Db,
  ruleIds: readonly string[],
  pages: readonly string[],
  firedSince: Date,
): Promise<LastAlert[]> {
  if (ruleIds.length === 0 || pages.length === 0) return [];
  const rows = await db
    .selectFrom('alerts')
    .select(['rule_id', 'page', 'id', 'status', 'triggered_at'])
    .distinctOn(['rule_id', 'page'])
    .where('rule_id', 'in', [...new Set(ruleIds)])
    .where('page', '=', (eb) => eb.fn.any(eb.val([...pages])))
    .where((eb) => eb.or([eb('status', '!=', 'resolved'), eb('triggered_at', '>=', firedSince)]))
    .orderBy('rule_id')
    .orderBy('page')
    .orderBy('triggered_at', 'desc')
    .execute();
  return rows.map((r) => ({ ...r, rule_id: r.rule_id!, page: r.page! }));
}

/** Whether the rule already has an alert for this page (deploy spikes: one per rule and deploy). */
export async function alertExists(db: Db, ruleId: string, page: string): Promise<boolean> {
  const row = await db
    .selectFrom('alerts')
    .select('id')
    .where('rule_id', '=', ruleId)
    .where('page', '=', page)
    .executeTakeFirst();
  return row !== undefined;
}

/** Stores a fired alert and the rule's last firing. */
export async function insertAlert(db: Db, alert: Alert): Promise<void> {
  await db
    .insertInto('alerts')
    .values({ ...alert, details: JSON.stringify(alert.details) })
    .execute();
  await db
    .updateTable('alert_rules')
    .set({ last_fired_at: alert.triggered_at })
    .where('id', '=', alert.rule_id!)
    .execute();
}

/** Resolves an alert not resolved yet; the resolved row, or undefined when it already was. */
export async function resolveAlert(db: Db, alertId: string, reason: string, at: Date) {
  return db
    .updateTable('alerts')
    .set({ status: 'resolved', resolved_at: at, resolved_reason: reason, updated_at: at })
    .where('id', '=', alertId)
    .where('status', '!=', 'resolved')
    .returningAll()
    .executeTakeFirst();
}

/**
 * Serialises alert evaluation of one site across transactions: a batch's score-following rules and the tick's pass
 * over every rule, which no longer share the tick gate, never decide on the same (rule, page) at once (two firings
 * of one condition). Held to the transaction's end. Callers lock sites in sorted order (no deadlock).
 */
export async function lockSiteAlerts(trx: Transaction<Database>, siteId: string): Promise<void> {
  await sql`select pg_advisory_xact_lock(hashtextextended(${`alerts:${siteId}`}, 0))`.execute(trx);
}
