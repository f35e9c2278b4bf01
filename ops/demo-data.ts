/**
 * `friction demo --events N`: realistic data written straight into the database, fast: 30 days of sessions over a
 * long tail of pages and elements, every signal type, conversions with values, several sources, devices and app
 * versions, deploys. Rows are generated hour by hour with time-ordered ids, so each index takes its inserts at its
 * right edge. Raw rows (events, signals, sessions) and the per-session rollups the processor keeps (the Explorer's
 * session states, the pages' viewers) go through binary COPY on PostgreSQL, in worker threads with connections of their own
 * (multi-row inserts on the embedded database, which has no COPY; ops/demo-copy.ts, ops/demo-generate.ts); the daily score history is
 * folded while generating, with the engine's own score formula; the Explorer's buckets are summed from the session
 * states in SQL; current page scores, issues and elements are derived afterwards by the processor's recompute path
 * (`friction recompute --write`), so every read route answers from rows the processor would have written.
 */
import { Worker } from 'node:worker_threads';
import { sql } from 'kysely';
import type { DatabaseHandle } from '../shared/db/connection.ts';
import { overallScore } from '../shared/domain/score-summary.ts';
import { newId } from '../shared/ids.ts';
import type { Logger } from '../shared/logger.ts';
import { confusionScore, siteMeanFriction, type PageWindowStats } from '../processor/engine/confusion-score.ts';
import { recomputeSiteCommand } from '../processor/recompute-site.ts';
import { rebuildSessionBuckets, rebuildSessionKeys } from '../shared/db/session-rollups.ts';
import { InsertSink } from './demo-copy.ts';
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
}

const HISTORY_COLUMNS = [
  'site_id',
  'environment',
  'page',
  'day',
  'score',
  'sessions',
  'page_views',
  'signal_count',
  'dominant_signal',
  'updated_at',
] as const;

type Field = string | number | null;

/**
 * Writes `events` events (and the sessions, signals, score history, deploys and the session rollups they imply) for
 * `siteId`, then derives the site's current scores, issues and elements with the processor's recompute.
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

  // Daily score history with the engine's formula, each day's prior the site mean of that day.
  const historyRows: Field[][] = [];
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
      historyRows.push([
        site,
        'production',
        p.page,
        day,
        p.score.score,
        p.st.sessions,
        p.st.pageViews,
        signalCount,
        p.score.dominantSignal,
        new Date(now).toISOString(),
      ]);
    }
  }
  for (let i = 0; i < historyRows.length; i += 1000) {
    const chunk = historyRows
      .slice(i, i + 1000)
      .map((r) => Object.fromEntries(HISTORY_COLUMNS.map((c, j) => [c, r[j]])));
    await handle.db
      .insertInto('score_history')
      .values(chunk as never)
      .onConflict((oc) => oc.doNothing())
      .execute();
  }
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
  if (handle.kind === 'postgres')
    await sql`analyze events; analyze signals; analyze sessions; analyze score_history`.execute(handle.db);
  const derivedAt = performance.now();
  // The Explorer's buckets, summed from the session states written above (the processor keeps both batch by batch).
  await rebuildSessionBuckets(handle.db, site);
  // The Explorer's session keys, from the stored events (not written beside the raw rows yet).
  await rebuildSessionKeys(handle.db, site);
  if (handle.kind === 'postgres')
    await sql`analyze explore_session_state; analyze explore_session_buckets; analyze page_viewers; analyze explore_session_keys`.execute(
      handle.db,
    );
  // Current scores, issues and elements: the processor's own recompute over the stored rows.
  const r = await recomputeSiteCommand(handle.db, site, now, true, log);
  log.info(
    { pages: r.pages.checked, issues: r.issues.expected, elements: r.elements.expected },
    'derived scores, issues and elements',
  );
  return {
    events: sum((t) => t.events),
    sessions: sum((t) => t.sessions),
    signals: sum((t) => t.signals),
    conversions: sum((t) => t.conversions),
    deploys,
    historyRows: historyRows.length,
    writeSeconds,
    deriveSeconds: (performance.now() - derivedAt) / 1000,
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
        progress: (n) =>
          progress.update(
            n,
            `${Math.round(n / ((performance.now() - started) / 1000)).toLocaleString('en-US')} events/s`,
          ),
      },
      log,
    );
    progress.done(`${Math.round(report.events / report.writeSeconds).toLocaleString('en-US')} events/s`);
    process.stdout.write(
      `wrote ${report.events.toLocaleString('en-US')} events (${report.sessions.toLocaleString('en-US')} sessions, ${report.signals.toLocaleString('en-US')} signals, ` +
        `${report.conversions.toLocaleString('en-US')} conversions, ${report.deploys} deploys, ${report.historyRows.toLocaleString('en-US')} score history rows) for site ${siteId} ` +
        `in ${report.writeSeconds.toFixed(1)} s: ${Math.round(report.events / report.writeSeconds).toLocaleString('en-US')} events/s (${handle.kind === 'postgres' ? 'COPY' : 'inserts, embedded'}); ` +
        `session rollup, scores, issues and elements derived in ${report.deriveSeconds.toFixed(1)} s\n`,
    );
    return report;
  } finally {
    await handle.close();
  }
}
