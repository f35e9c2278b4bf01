/**
 * `friction demo --events N`: realistic data written straight into the database, fast: 30 days of sessions over a
 * long tail of pages and elements, every signal type, conversions with values, several sources, devices and app
 * versions, deploys. Rows are generated hour by hour with time-ordered ids, so each index takes its inserts at its
 * right edge. Raw rows (events, signals, sessions) and the per-session rollups the processor keeps (the Explorer's
 * session states, the pages' viewers) go through binary COPY on PostgreSQL, in worker threads with connections of their own
 * (multi-row inserts on the embedded database, which has no COPY; ops/demo-copy.ts, ops/demo-generate.ts); the daily score history is
 * folded while generating, with the engine's own score formula; the Explorer's buckets are summed from the session
 * states in SQL; current page scores, issues and elements are derived afterwards set-based from the raw rows
 * (processor/derive-site.ts, the same rows as `friction recompute --write`), so every read route answers from rows the
 * processor would have written. Into an empty database the COPY runs without secondary indexes (ops/demo-indexes.ts).
 */
import { Worker } from 'node:worker_threads';
import { sql } from 'kysely';
import type { DatabaseHandle } from '../shared/db/connection.ts';
import { overallScore } from '../shared/domain/score-summary.ts';
import { newId } from '../shared/ids.ts';
import type { Logger } from '../shared/logger.ts';
import { confusionScore, siteMeanFriction, type PageWindowStats } from '../processor/engine/confusion-score.ts';
import { recomputeSiteCommand } from '../processor/recompute-site.ts';
import { deriveSite, hasDerivedRows } from '../processor/derive-site.ts';
import {
  rebuildPageBuckets,
  rebuildPageWeightedSignals,
  rebuildSessionBuckets,
  rebuildSessionKeys,
} from '../shared/db/session-rollups.ts';
import { InsertSink } from './demo-copy.ts';
import { deferIndexes, restoreIndexes } from './demo-indexes.ts';
import { refreshSiteScoreDays } from '../shared/db/site-score-days.ts';
import { rebuildPageHeatmapHours } from '../shared/db/page-heatmap-hours.ts';
import {
  DAY,
  EVENTS,
  PAGE_VIEWERS,
  SESSION_STATE,
  SESSIONS,
  SIGNAL_TYPES,
  SIGNALS,
  generateHours,
  historyDays,
  pagePath,
  planHours,
  type GenParams,
  type Sinks,
  type Tallies,
  type WorkerJob,
} from './demo-generate.ts';

export interface DemoDataOptions {
  events: number;
  siteId: string;
  days?: number;
  pages?: number;
  /** Seed of the generator: the same seed writes the same rows (ids aside). */
  seed?: number;
  now?: number;
  /** Worker threads on PostgreSQL, each generating every n-th hour and COPYing it on its own connections (default 4). */
  threads?: number;
  /** Called after every hour of data with the events written so far. */
  progress?: (events: number) => void;
}

export interface DemoDataReport {
  events: number;
  sessions: number;
  signals: number;
  conversions: number;
  deploys: number;
  historyRows: number;
  /** Writing the raw rows (COPY), and deriving the session rollup, scores, issues and elements. */
  writeSeconds: number;
  deriveSeconds: number;
  /** Each phase after the raw write, in order: its name and seconds. */
  phases: { name: string; seconds: number }[];
}

/** The daily score history rows, column by column (one unnest insert). */
interface HistoryColumns {
  page: string[];
  day: string[];
  score: number[];
  sessions: number[];
  pageViews: number[];
  signalCount: number[];
  dominant: (string | null)[];
}

/**
 * Writes `events` events (and the sessions, signals, score history, deploys and the session rollups they imply) for
 * `siteId`, then derives the site's current scores, issues and elements from them (processor/derive-site.ts).
 */
export async function writeDemoData(
  handle: DatabaseHandle,
  databaseUrl: string | undefined,
  o: DemoDataOptions,
  log: Logger,
): Promise<DemoDataReport> {
  const params: GenParams = {
    siteId: o.siteId,
    seed: o.seed ?? 1,
    days: o.days ?? 30,
    pages: o.pages ?? 2000,
    now: o.now ?? Date.now(),
    events: o.events,
  };
  const { now } = params;
  const site = o.siteId;
  const hours = planHours(params);
  const started = performance.now();
  let written = 0;
  const progress = (n: number) => {
    written += n;
    o.progress?.(written);
  };
  let parts: Tallies[];
  let deferred = 0;
  if (handle.kind === 'postgres' && databaseUrl) {
    // Indexes a killed run left unbuilt first; then, into empty tables, COPY without the secondary indexes.
    await restoreIndexes(handle.db);
    deferred = await deferIndexes(handle.db);
  }
  if (handle.kind === 'postgres' && databaseUrl) {
    // Worker threads, each with every n-th hour and its own COPY connections (the generator and the server's parsing
    // and indexing then run on every core).
    const threads = Math.max(1, Math.min(o.threads ?? 4, hours.length));
    parts = await Promise.all(
      Array.from({ length: threads }, (_, w) => {
        const job: WorkerJob = {
          kind: 'friction-demo',
          params,
          hours: hours.filter((h) => h.index % threads === w),
          databaseUrl,
        };
        const worker = new Worker(new URL('./demo-generate.ts', import.meta.url), { workerData: job });
        return new Promise<Tallies>((resolve, reject) => {
          let done: Tallies | undefined;
          worker.on('message', (m: { progress?: number; tallies?: Tallies }) => {
            if (m.progress !== undefined) progress(m.progress);
            if (m.tallies) done = m.tallies;
          });
          worker.on('error', reject);
          worker.on('exit', (code) =>
            done ? resolve(done) : reject(new Error(`demo data worker ${w} exited with code ${code}`)),
          );
        });
      }),
    );
  } else {
    const sinks: Sinks = {
      events: new InsertSink(handle, EVENTS),
      signals: new InsertSink(handle, SIGNALS),
      sessions: new InsertSink(handle, SESSIONS),
      states: new InsertSink(handle, SESSION_STATE),
      viewers: new InsertSink(handle, PAGE_VIEWERS),
    };
    parts = [await generateHours(params, hours, sinks, progress)];
  }
  const sum = (f: (t: Tallies) => number) => parts.reduce((a, t) => a + f(t), 0);
  const [histSessions, histViews, histSignals] = (['histSessions', 'histViews', 'histSignals'] as const).map((k) => {
    const total = parts[0][k].slice();
    for (const t of parts.slice(1)) for (let i = 0; i < total.length; i++) total[i] += t[k][i];
    return total;
  });
  const writeSeconds = (performance.now() - started) / 1000;
  const phases: DemoDataReport['phases'] = [];
  let lap = performance.now();
  const phase = (name: string) => {
    const t = performance.now();
    phases.push({ name, seconds: (t - lap) / 1000 });
    lap = t;
  };
  if (deferred > 0) {
    await restoreIndexes(handle.db);
    phase(`secondary indexes built after the COPY (${deferred})`);
  }

  // Daily score history with the engine's formula, each day's prior the site mean of that day.
  const history: HistoryColumns = {
    page: [],
    day: [],
    score: [],
    sessions: [],
    pageViews: [],
    signalCount: [],
    dominant: [],
  };
  const dayScore = new Map<string, number>();
  const { day0, nDays } = historyDays(params);
  const nPages = params.pages;
  const nTypes = SIGNAL_TYPES.length;
  for (let d = 0; d < nDays; d++) {
    const day = new Date((day0 + d) * DAY).toISOString().slice(0, 10);
    const list: [string, PageWindowStats & { signals: Record<string, number> }][] = [];
    for (let p = 0; p < nPages; p++) {
      const k = d * nPages + p;
      if (histSessions[k] === 0) continue;
      const sig: Record<string, number> = {};
      for (let g = 0; g < nTypes; g++) {
        const c = histSignals[k * nTypes + g];
        if (c > 0) sig[SIGNAL_TYPES[g]] = c;
      }
      list.push([pagePath(p), { sessions: histSessions[k], pageViews: histViews[k], signals: sig }]);
    }
    if (list.length === 0) continue;
    const prior = { siteMeanFriction: siteMeanFriction(list.map(([, st]) => st)) };
    const scored = list.map(([page, st]) => ({ page, st, score: confusionScore(st, prior) }));
    dayScore.set(day, overallScore(scored.map((p) => ({ score: p.score.score, sessions: p.st.sessions }))));
    for (const p of scored) {
      const signalCount = Object.values(p.st.signals).reduce((a, b) => a + b, 0);
      history.page.push(p.page);
      history.day.push(day);
      history.score.push(p.score.score);
      history.sessions.push(p.st.sessions);
      history.pageViews.push(p.st.pageViews);
      history.signalCount.push(signalCount);
      history.dominant.push(p.score.dominantSignal);
    }
  }
  // One statement of column arrays: 56k rows in 1,000-row inserts took 16 s of a 1M run at load 30.
  await sql`
    insert into score_history (site_id, environment, page, day, score, sessions, page_views, signal_count, dominant_signal, updated_at)
    select ${site}::uuid, 'production', h.*, ${new Date(now)}::timestamptz
    from unnest(${history.page}::text[], ${history.day}::date[], ${history.score}::real[], ${history.sessions}::int[],
                ${history.pageViews}::int[], ${history.signalCount}::int[], ${history.dominant}::text[]) as h
    on conflict do nothing`.execute(handle.db);
  await refreshSiteScoreDays(
    handle.db,
    [...new Set(history.day)].map((day) => ({ siteId: site, environment: 'production', day })),
  );
  phase('score history');
  // Deploys: one per version, measured against the day after (the last one still open).
  let deploys = 0;
  const deployEvery = 3 * DAY;
  const firstDeploy = now - params.days * DAY;
  for (let at = firstDeploy + DAY / 2, k = 0; at < now; at += deployEvery, k++) {
    const before =
      dayScore.get(new Date(at - DAY).toISOString().slice(0, 10)) ??
      dayScore.get(new Date(at).toISOString().slice(0, 10)) ??
      0;
    const afterDay = dayScore.get(new Date(at + DAY).toISOString().slice(0, 10));
    const open = at + deployEvery >= now || afterDay === undefined;
    await handle.db
      .insertInto('deploys')
      .values({
        id: newId(),
        site_id: site,
        environment: 'production',
        version: `1.${k}`,
        commit_sha: null,
        url: null,
        description: `demo release 1.${k}`,
        confusion_before: before,
        confusion_after: open ? null : afterDay,
        delta: open ? null : Math.round((afterDay! - before) * 10) / 10,
        recorded_at: new Date(at),
        measured_until: open ? null : new Date(at + DAY),
        frozen_at: open ? null : new Date(at + DAY),
        idempotency_key: null,
        created_by: 'friction demo',
      })
      .execute();
    deploys++;
  }
  phase('deploys');
  const derivedAt = performance.now();
  if (handle.kind === 'postgres') {
    await sql`analyze events; analyze signals; analyze sessions; analyze score_history`.execute(handle.db);
    phase('analyze');
  }
  // The Explorer's buckets, summed from the session states written above (the processor keeps both batch by batch).
  await rebuildSessionBuckets(handle.db, site);
  phase('explore_session_buckets');
  // The Explorer's session keys, from the stored events (not written beside the raw rows yet), and its page buckets
  // summed from the states and keys.
  await rebuildSessionKeys(handle.db, site);
  phase('explore_session_keys');
  await rebuildPageBuckets(handle.db, site);
  phase('explore_page_buckets');
  // Revenue's weighted signals per page and session, from the stored signals (7 % of the rows).
  await rebuildPageWeightedSignals(handle.db, site);
  phase('page_weighted_signals');
  // The page heatmap's hourly counts, from the stored signals.
  await rebuildPageHeatmapHours(handle.db, site);
  phase('page_heatmap_hours');
  if (handle.kind === 'postgres')
    await sql`analyze explore_session_state; analyze explore_session_buckets; analyze page_viewers; analyze explore_session_keys; analyze explore_page_buckets; analyze page_weighted_signals; analyze page_heatmap_hours`.execute(
      handle.db,
    );
  // Current scores, issues and elements of both environments, set-based from the raw rows (processor/derive-site.ts);
  // a site that has issues or elements already has them re-decided by the processor's recompute instead.
  for (const environment of ['production', 'staging'] as const) {
    if (await hasDerivedRows(handle.db, site, environment)) {
      await recomputeSiteCommand(handle.db, site, now, true, log, environment);
      phase(`${environment}: processor recompute`);
    } else {
      lap = performance.now();
      await deriveSite(handle.db, site, now, environment, (table, rows, seconds) => {
        phases.push({ name: `${environment} ${table} (${rows.toLocaleString('en-US')} rows)`, seconds });
        log.info({ environment, table, rows, seconds }, 'derived');
      });
      lap = performance.now();
    }
  }
  return {
    events: sum((t) => t.events),
    sessions: sum((t) => t.sessions),
    signals: sum((t) => t.signals),
    conversions: sum((t) => t.conversions),
    deploys,
    historyRows: history.page.length,
    writeSeconds,
    deriveSeconds: (performance.now() - derivedAt) / 1000,
    phases,
  };
}

/** Options of `friction demo --events` (validated by the CLI). */
export interface DemoDataCommand {
  events: number;
  days: number;
  pages: number;
  site?: string;
  seed: number;
  threads: number;
}

/**
 * `friction demo --events N`: opens the configured database (DATABASE_URL, or the embedded one under
 * FRICTION_DATA_DIR: stop Friction first, the embedded database has one user), migrates it, writes the data with a
 * progress bar and prints the rate. The site is --site, else a new organization and site whose keys are printed.
 */
export async function runDemoData(
  config: import('../shared/config.ts').Config,
  o: DemoDataCommand,
  log: Logger,
): Promise<DemoDataReport> {
  const { openDatabase } = await import('../shared/db/connection.ts');
  const { migrateToLatest } = await import('../shared/db/migrator.ts');
  const { insertOrg, provisionSite } = await import('../shared/tenancy/provision.ts');
  const { Progress } = await import('./bench/progress.ts');
  const handle = await openDatabase({
    url: config.DATABASE_URL,
    dataDir: config.FRICTION_DATA_DIR,
    statementTimeoutMs: 0,
  });
  try {
    await migrateToLatest(handle.db);
    let siteId = o.site;
    if (siteId) {
      const found = await handle.db.selectFrom('sites').select('id').where('id', '=', siteId).executeTakeFirst();
      if (!found)
        throw Object.assign(new Error(`no site ${siteId} in this database (--site)`), { name: 'StartupError' });
    } else {
      const orgId = await insertOrg(handle.db, {
        name: `Demo data ${new Date().toISOString().slice(0, 10)}`,
        plan: 'enterprise',
      });
      const site = await provisionSite(handle.db, { orgId, name: 'Demo shop', url: 'https://shop.example' });
      siteId = site.siteId;
      process.stdout.write(
        `new site ${site.siteId} (org ${orgId})\n  secret key (query:read): ${site.secretKey}\n  publishable key: ${site.publishableKey}\n`,
      );
    }
    const progress = new Progress('demo data', o.events);
    const started = performance.now();
    const report = await writeDemoData(
      handle,
      config.DATABASE_URL,
      {
        events: o.events,
        siteId,
        days: o.days,
        pages: o.pages,
        seed: o.seed,
        threads: o.threads,
        progress: (n) => progress.updateRate(n, 'events'),
      },
      log,
    );
    progress.done(`${Math.round(report.events / report.writeSeconds).toLocaleString('en-US')} events/s`);
    const total = (performance.now() - started) / 1000;
    const n = (v: number) => v.toLocaleString('en-US');
    process.stdout.write(
      `wrote ${n(report.events)} events (${n(report.sessions)} sessions, ${n(report.signals)} signals, ` +
        `${n(report.conversions)} conversions, ${report.deploys} deploys, ${n(report.historyRows)} score history rows) for site ${siteId}\n` +
        `  raw rows (${handle.kind === 'postgres' ? 'COPY' : 'inserts, embedded'}): ${report.writeSeconds.toFixed(1)} s, ${n(Math.round(report.events / report.writeSeconds))} events/s\n` +
        report.phases.map((p) => `  ${p.name}: ${p.seconds.toFixed(1)} s\n`).join('') +
        `  derived (analyze, rollups, scores, issues, elements) in ${report.deriveSeconds.toFixed(1)} s; ` +
        `all in ${total.toFixed(1)} s: ${n(Math.round(report.events / total))} events/s end to end\n`,
    );
    return report;
  } finally {
    await handle.close();
  }
}
