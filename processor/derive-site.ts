import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../shared/db/database.ts';
import type { Environment } from '../shared/domain/deploy-verification.ts';
import { environmentWhere } from '../shared/db/environment.ts';
import { enqueueOutbox, type OutboxMessage } from '../shared/notify/outbox.ts';
import { newId } from '../shared/ids.ts';
import { decideIssue, type ClusterSummary, type Latest } from './engine/clustering.ts';
import { siteMeanFriction, type PageWindowStats } from './engine/confusion-score.ts';
import { aggregateElement, elementDraft, type ElementAggregate, type ElementDraft } from './engine/elements.ts';
import { canonicalSelector } from './engine/selectors.ts';
import { clusterWindowStart, pageWindowStart, utcDate } from './engine/time.ts';
import { EVIDENCE_SESSIONS } from './engine/cluster-evidence.ts';
import { issuePayload } from './issues/issue-keeper.ts';
import { writeElements } from './store/elements.store.ts';
import { insertIssueUpdates, insertIssues, type NewIssue } from './store/issues.store.ts';
import { loadScoreHistory, upsertPageScores } from './store/scores.store.ts';
import { pageScoreWrite } from './scoring/score-keeper.ts';

/**
 * Set-based derivation of a site's current page scores, issues and elements from its raw rows (`friction demo`, after
 * it wrote millions of rows around the processor). The raw rows never leave the database: one GROUP BY per aggregate
 * (page stats of the 24 h window; the signals of the 7-day cluster window per cluster and session), so what comes
 * back is one row per page, cluster or element; the engine's own pure functions (confusionScore, decideIssue,
 * aggregateElement) finish those rows, and the processor's own stores write each derived table in one statement.
 * The same answers as the processor's recompute (`friction recompute --write`: tested in ops/derive-site.int.test.ts),
 * which reads every event of the window into memory and folds it row by row (1,216 s at 10M demo events).
 *
 * For a site with no issues and elements yet in the environment (`deriveSite` says so otherwise): an existing issue
 * is re-decided against its stored status and history, which is the processor's recompute path.
 */

type Db = Kysely<Database> | Transaction<Database>;

/** JavaScript's `String.prototype.trim` set (WhiteSpace and LineTerminator), for SQL's btrim: labels are trimmed alike. */
const JS_WHITESPACE =
  '\t\n\v\f\r \u00a0\u1680\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000\ufeff';

/** What the steps share: the site, the instant, the environment, and what earlier steps derived. */
interface DeriveContext {
  readonly siteId: string;
  readonly environment: Environment;
  readonly now: number;
  /** Page stats of the 24 h window (the page_scores step sets them; issue severity reads each page's sessions). */
  pages?: Map<string, PageWindowStats>;
  /** Cluster summaries of the 7-day window (the ux_issues step sets them; page_elements groups them). */
  clusters?: ClusterRow[];
}

/** One derived table: how its rows come from the raw rows. Steps run in order in one transaction. */
interface DeriveStep {
  readonly table: string;
  /** Writes the table's rows for the context's site and environment; returns how many. */
  readonly run: (trx: Transaction<Database>, ctx: DeriveContext) => Promise<number>;
}

/** Page stats of the 24 h page window straight from `events`: distinct sessions, views, signals by type. */
async function loadPageStats(db: Db, ctx: DeriveContext): Promise<Map<string, PageWindowStats>> {
  // The engine counts page views and typed signals (events.ts isSignalEvent), each with its session.
  const rows = await sql<{ page: string; sessions: number; views: number; signals: Record<string, number> | null }>`
    with w as (
      select page, session_id, type, signal from events
      where site_id = ${ctx.siteId} and ts >= ${new Date(pageWindowStart(ctx.now))}::timestamptz and ${environmentWhere(ctx.environment)}
        and (type = 'page_view' or (type = 'signal' and signal <> ''))
    ), s as (
      select page, jsonb_object_agg(signal, n) as signals
      from (select page, signal, count(*)::int as n from w where type = 'signal' group by page, signal) t group by page
    )
    select p.page, p.sessions, p.views, s.signals
    from (select page, count(distinct session_id)::int as sessions, (count(*) filter (where type = 'page_view'))::int as views
          from w group by page) p
    left join s on s.page = p.page`.execute(db);
  return new Map(
    rows.rows.map((r) => [r.page, { sessions: r.sessions, pageViews: r.views, signals: r.signals ?? {} }]),
  );
}

const pageScores: DeriveStep = {
  table: 'page_scores',
  async run(trx, ctx) {
    const pages = await loadPageStats(trx, ctx);
    ctx.pages = pages;
    const { siteId, now } = ctx;
    const today = utcDate(now);
    const history = new Map<string, { date: string; score: number }[]>();
    for (const r of await loadScoreHistory(trx, ctx.environment, [siteId], today)) {
      const list = history.get(r.page) ?? [];
      list.push({ date: r.date, score: r.score });
      history.set(r.page, list);
    }
    // The score keeper's rescore: every page of the window with the site's mean as the prior (score-keeper.ts).
    const siteMean = siteMeanFriction([...pages.values()]);
    const rows = [...pages].map(([page, stats]) =>
      pageScoreWrite(siteId, page, stats, siteMean, history.get(page) ?? [], now),
    );
    for (let i = 0; i < rows.length; i += 5000) await upsertPageScores(trx, ctx.environment, rows.slice(i, i + 5000));
    return rows.length;
  },
};

/** One cluster of the 7-day window as SQL sums it, with the latest label's time (elements take the latest across types). */
interface ClusterRow extends ClusterSummary {
  readonly labelTs: number | null;
}

/**
 * The clusters of the window: signals grouped by (page, raw selector, type, session) in one scan of `signals` (the
 * signal events' mirror, 7 % of the rows, which the processor's issue keeper rebuilds its clusters from), the
 * raw selectors made canonical here (selectors.ts: the engine's parser, once per distinct selector), then grouped by
 * (page, canonical selector, type, session) and by cluster in SQL. "Latest" is by (time, value), the larger string
 * winning a tie (cluster-model.ts isLater), in code-point order (collate "C").
 */
async function loadClusters(trx: Transaction<Database>, ctx: DeriveContext): Promise<ClusterRow[]> {
  await sql`
    create temp table derive_signal_groups on commit drop as
    select page, selector, signal_type, session_id, count(*)::int as n, min(ts) as first_ts, max(ts) as last_ts,
           (array_agg(l order by ts desc, l collate "C" desc) filter (where l <> ''))[1] as label,
           max(ts) filter (where l <> '') as label_ts
    from (select page, selector, signal_type, session_id, ts, btrim(label, ${JS_WHITESPACE}) as l from signals
          where site_id = ${ctx.siteId} and environment = ${ctx.environment}
            and ts >= ${new Date(clusterWindowStart(ctx.now))}::timestamptz and signal_type <> '') g
    group by page, selector, signal_type, session_id`.execute(trx);
  const raw = (
    await sql<{
      selector: string;
    }>`select distinct selector from derive_signal_groups where selector is not null`.execute(trx)
  ).rows.map((r) => r.selector);
  const canonical = raw.map((s) => canonicalSelector(s));
  // One row per (cluster, session): the evidence ranks them, and an element's users are its distinct sessions.
  await sql`
    create temp table derive_cluster_sessions on commit drop as
    select g.page, coalesce(m.canonical, '') as canonical, g.signal_type, g.session_id, sum(g.n)::int as n,
           min(g.first_ts) as first_ts, max(g.last_ts) as last_ts,
           (array_agg(coalesce(g.selector, '') order by g.last_ts desc, coalesce(g.selector, '') collate "C" desc))[1] as selector,
           (array_agg(g.label order by g.label_ts desc, g.label collate "C" desc) filter (where g.label is not null))[1] as label,
           max(g.label_ts) as label_ts
    from derive_signal_groups g left join unnest(${raw}::text[], ${canonical}::text[]) as m(raw, canonical) on m.raw = g.selector
    group by g.page, coalesce(m.canonical, ''), g.signal_type, g.session_id`.execute(trx);
  const rows = await sql<{
    page: string;
    canonical: string;
    signal_type: string;
    signals: number;
    sessions: number;
    window_sessions: number;
    first_ms: number;
    last_ms: number;
    selector: string;
    label: string | null;
    label_ms: number | null;
    evidence: [string, number, number][];
  }>`
    select page, canonical, signal_type, sum(n)::int as signals, count(*)::int as sessions,
           (count(*) filter (where last_ts >= ${new Date(pageWindowStart(ctx.now))}::timestamptz))::int as window_sessions,
           (extract(epoch from min(first_ts)) * 1000)::float8 as first_ms, (extract(epoch from max(last_ts)) * 1000)::float8 as last_ms,
           (array_agg(selector order by last_ts desc, selector collate "C" desc))[1] as selector,
           (array_agg(label order by label_ts desc, label collate "C" desc) filter (where label is not null))[1] as label,
           (extract(epoch from max(label_ts)) * 1000)::float8 as label_ms,
           to_jsonb((array_agg(jsonb_build_array(session_id, n, (extract(epoch from last_ts) * 1000)::float8)
                               order by n desc, last_ts desc, session_id collate "C"))[1:${sql.lit(EVIDENCE_SESSIONS)}]) as evidence
    from derive_cluster_sessions group by page, canonical, signal_type`.execute(trx);
  return rows.rows.map((r) => ({
    key: { siteId: ctx.siteId, page: r.page, selector: r.canonical, signalType: r.signal_type },
    selector: r.selector,
    label: r.label,
    labelTs: r.label_ms,
    signalCount: r.signals,
    affectedSessions: r.sessions,
    windowAffectedSessions: r.window_sessions,
    firstSignalAt: r.first_ms,
    lastSignalAt: r.last_ms,
    evidence: r.evidence.map(([sessionId, signals, lastSignalAt]) => ({ sessionId, signals, lastSignalAt })),
  }));
}

/** The issue fields of an issue.created message (issue-keeper.ts publishes the same). */
const createdMessage = (id: string, issue: NewIssue['draft'], ctx: DeriveContext): OutboxMessage => ({
  kind: 'issue.created',
  aggregate: `issue:${id}`,
  msgId: `issue.created:${id}`,
  payload: {
    event: 'issue.created',
    occurred_at: new Date(ctx.now).toISOString(),
    issue: issuePayload(id, ctx.environment, { ...issue, siteId: ctx.siteId }),
  },
});

const issues: DeriveStep = {
  table: 'ux_issues',
  async run(trx, ctx) {
    const clusters = await loadClusters(trx, ctx);
    ctx.clusters = clusters;
    const pages = ctx.pages ?? (await loadPageStats(trx, ctx));
    // The processor's decision for a cluster without an issue: create one when it passes the thresholds.
    const creates: NewIssue[] = [];
    for (const summary of clusters) {
      const d = decideIssue({
        summary,
        existing: null,
        pageSessions: pages.get(summary.key.page)?.sessions ?? 0,
        now: ctx.now,
      });
      if (d.action === 'create') creates.push({ id: newId(), draft: d.issue });
    }
    await insertIssues(trx, ctx.environment, creates, ctx.now);
    await insertIssueUpdates(
      trx,
      creates.map((c) => ({ issueId: c.id, source: 'engine', kind: 'created', changes: { status: 'open' } })),
    );
    await enqueueOutbox(
      trx,
      creates.map((c) => createdMessage(c.id, c.draft, ctx)),
    );
    return creates.length;
  },
};

const later = (a: Latest, b: Latest | null): Latest =>
  b === null || a.ts > b.ts || (a.ts === b.ts && a.value > b.value) ? a : b;

const elements: DeriveStep = {
  table: 'page_elements',
  async run(trx, ctx) {
    const users = await sql<{ page: string; canonical: string; users: number }>`
      select page, canonical, count(distinct session_id)::int as users from derive_cluster_sessions
      where canonical <> '' group by page, canonical`.execute(trx);
    const parts = new Map<string, ElementDraft<number>>();
    for (const c of ctx.clusters ?? []) {
      if (c.key.selector === '') continue;
      const k = `${c.key.page}\u0000${c.key.selector}`;
      let p = parts.get(k);
      if (p === undefined) parts.set(k, (p = elementDraft(c.key.page, c.key.selector, c.lastSignalAt)));
      p.signals.set(c.key.signalType, c.signalCount);
      p.byType.set(c.key.signalType, c.affectedSessions);
      p.last = Math.max(p.last, c.lastSignalAt);
      p.selector = later({ ts: c.lastSignalAt, value: c.selector }, p.selector);
      if (c.label !== null && c.labelTs !== null) p.label = later({ ts: c.labelTs, value: c.label }, p.label);
    }
    const upserts: ElementAggregate[] = users.rows.map((u) => {
      const p = parts.get(`${u.page}\u0000${u.canonical}`)!;
      return aggregateElement({
        siteId: ctx.siteId,
        page: p.page,
        canonicalSelector: p.canonical,
        selector: p.selector!,
        label: p.label,
        signals: p.signals,
        affectedByType: p.byType,
        affectedUsers: u.users,
        lastSignalAt: p.last,
      });
    });
    await writeElements(trx, ctx.environment, upserts, [], ctx.now);
    return upserts.length;
  },
};

/** The derived tables in the order they are written (a later step may read what an earlier one derived). */
const DERIVE_STEPS: readonly DeriveStep[] = [pageScores, issues, elements];

/** Whether the site already has issues or elements in the environment (then only the processor's recompute re-decides them). */
export async function hasDerivedRows(db: Db, siteId: string, environment: Environment): Promise<boolean> {
  const r = await sql<{ any: boolean }>`
    select exists (select 1 from ux_issues where site_id = ${siteId} and environment = ${environment})
        or exists (select 1 from page_elements where site_id = ${siteId} and environment = ${environment}) as any`.execute(
    db,
  );
  return r.rows[0].any;
}

/**
 * Derives the site's page scores, issues and elements of one environment at `now` from its raw rows, every step in
 * one transaction; `onStep` hears each table's rows and seconds. For a site without issues and elements in that
 * environment (hasDerivedRows).
 */
export async function deriveSite(
  db: Kysely<Database>,
  siteId: string,
  now: number,
  environment: Environment,
  onStep?: (table: string, rows: number, seconds: number) => void,
): Promise<void> {
  await db.transaction().execute(async (trx) => {
    const ctx: DeriveContext = { siteId, environment, now };
    for (const step of DERIVE_STEPS) {
      const t = performance.now();
      const rows = await step.run(trx, ctx);
      onStep?.(step.table, rows, (performance.now() - t) / 1000);
    }
  });
}
