import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../../shared/db/database.ts';
import type { Alert } from '../../shared/notify/alert.ts';
import type { TriggerType } from '../alerts/rules.ts';

type Db = Kysely<Database> | Transaction<Database>;

/**
 * The alert evaluator's reads and writes (processor/alerts/alert-evaluator.ts). Every read is set-based: one statement
 * per site (or per rule set) over all its pages, each page's rows found by index seeks on page_scores' primary key
 * (site_id, environment, page, window_start) and bounded by time, so a tick costs the same per page whatever the
 * history holds. Rules watch the site's production only.
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

/** The pages a site's tick evaluates: scored in production since `since`, or with an alert not resolved yet. */
export async function pagesToEvaluate(db: Db, siteId: string, since: Date): Promise<string[]> {
  const rows = await db
    .selectFrom('page_scores')
    .select('page')
    .where('site_id', '=', siteId)
    .where('environment', '=', 'production')
    .where('window_start', '>=', since)
    .union(
      db
        .selectFrom('alerts')
        .select((eb) => eb.fn.coalesce('page', eb.val('')).as('page'))
        .where('site_id', '=', siteId)
        .where('status', '!=', 'resolved')
        .where('page', 'is not', null),
    )
    .execute();
  return rows.map((r) => r.page);
}

export interface PageNow {
  page: string;
  score: number;
  sessions: number;
  windowStart: Date;
  /** The score of the hour before the latest (any age), null when the page has one hour. */
  previous: number | null;
  firstSeen: Date;
}

/**
 * Each page's latest hour, the hour before it and its first hour: three index seeks per page, whatever its history.
 * NOTE: raw SQL: lateral joins over an unnested page list are beyond kysely's builder.
 */
export async function latestPageScores(db: Db, siteId: string, pages: readonly string[]): Promise<PageNow[]> {
  if (pages.length === 0) return [];
  const { rows } = await sql<{
    page: string;
    score: number;
    sessions: number;
    window_start: Date;
    previous: number | null;
    first_seen: Date;
  }>`
    select p.page, cur.score, cur.sessions, cur.window_start, prev.score as previous, first.window_start as first_seen
    from unnest(${[...pages]}::text[]) as p(page)
    cross join lateral (
      select score, sessions, window_start from page_scores s
      where s.site_id = ${siteId} and s.environment = 'production' and s.page = p.page
      order by window_start desc limit 1) cur
    left join lateral (
      select score from page_scores s
      where s.site_id = ${siteId} and s.environment = 'production' and s.page = p.page and s.window_start < cur.window_start
      order by window_start desc limit 1) prev on true
    cross join lateral (
      select window_start from page_scores s
      where s.site_id = ${siteId} and s.environment = 'production' and s.page = p.page
      order by window_start asc limit 1) first`.execute(db);
  return rows.map((r) => ({
    page: r.page,
    score: Number(r.score),
    sessions: r.sessions,
    windowStart: new Date(r.window_start),
    previous: r.previous === null ? null : Number(r.previous),
    firstSeen: new Date(r.first_seen),
  }));
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

export interface AnomalySamples {
  /** The same hour of the week, 1 to `weeks` weeks before the page's latest hour. */
  weekly: { score: number; sessions: number }[];
  /** The hours of the 24 before the latest. */
  last24h: { score: number; sessions: number }[];
}

/**
 * The anomaly baseline's samples of each page, relative to its latest hour (`latest`): at most `weeks` + 23 rows per
 * page, each found by an index seek, instead of every hour of the lookback (pages × weeks × 168 rows read and scanned
 * per page: quadratic). NOTE: raw SQL: lateral joins and generate_series are beyond kysely's builder.
 */
export async function anomalySamples(
  db: Db,
  siteId: string,
  latest: readonly { page: string; windowStart: Date }[],
  weeks: number,
): Promise<Map<string, AnomalySamples>> {
  const out = new Map<string, AnomalySamples>();
  if (latest.length === 0) return out;
  // One row per page, its samples as arrays: a row per sample (32 per page) cost more to send and parse than to read.
  const { rows } = await sql<{
    page: string;
    weekly_scores: number[] | null;
    weekly_sessions: number[] | null;
    day_scores: number[] | null;
    day_sessions: number[] | null;
  }>`
    with cur as (
      select * from unnest(${latest.map((l) => l.page)}::text[], ${latest.map((l) => l.windowStart.toISOString())}::timestamptz[]) as c(page, ws)),
    samples as (
      select c.page, s.score, s.sessions, false as weekly
      from cur c join page_scores s
        on s.site_id = ${siteId} and s.environment = 'production' and s.page = c.page
        and s.window_start >= c.ws - interval '1 day' and s.window_start < c.ws
      union all
      select c.page, s.score, s.sessions, true as weekly
      from cur c cross join generate_series(1, ${weeks}::int) as k(n) join page_scores s
        on s.site_id = ${siteId} and s.environment = 'production' and s.page = c.page
        and s.window_start = c.ws - k.n * interval '7 days')
    select page,
      array_agg(score) filter (where weekly) as weekly_scores, array_agg(sessions) filter (where weekly) as weekly_sessions,
      array_agg(score) filter (where not weekly) as day_scores, array_agg(sessions) filter (where not weekly) as day_sessions
    from samples group by page`.execute(db);
  const zip = (scores: number[] | null, sessions: number[] | null) =>
    (scores ?? []).map((score, i) => ({ score: Number(score), sessions: sessions![i]! }));
  for (const r of rows)
    out.set(r.page, { weekly: zip(r.weekly_scores, r.weekly_sessions), last24h: zip(r.day_scores, r.day_sessions) });
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

/** The stored memory of these rules on these pages. */
export async function ruleStates(
  db: Db,
  ruleIds: readonly string[],
  pages: readonly string[],
): Promise<StoredRuleState[]> {
  if (ruleIds.length === 0 || pages.length === 0) return [];
  return db
    .selectFrom('alert_rule_states')
    .select(['rule_id', 'page', 'recent', 'consecutive', 'clear_since', 'held_back_since', 'held_back_reason'])
    .where('rule_id', 'in', [...new Set(ruleIds)])
    .where('page', '=', (eb) => eb.fn.any(eb.val([...pages])))
    .execute();
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
