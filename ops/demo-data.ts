/**
 * `friction demo --events N`: realistic data written straight into the database, fast: 30 days of sessions over a
 * long tail of pages and elements, every signal type, conversions with values, several sources, devices and app
 * versions, deploys. Raw rows (events, signals, sessions) go through COPY on PostgreSQL (multi-row inserts on the
 * embedded database, which has no COPY); the daily score history is folded while generating, with the engine's own
 * score formula; current page scores, issues and elements are derived afterwards by the processor's recompute path
 * (`friction recompute --write`), so every read route answers from rows the processor would have written.
 */
import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import type { Writable } from 'node:stream';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { sql } from 'kysely';
import type { DatabaseHandle } from '../shared/db/connection.ts';
import { escapeCopyText } from '../shared/db/bulk.ts';
import { SIGNAL_CATALOG } from '../shared/domain/signal-catalog.ts';
import { overallScore } from '../shared/domain/score-summary.ts';
import { newId } from '../shared/ids.ts';
import type { Logger } from '../shared/logger.ts';
import { confusionScore, siteMeanFriction, type PageWindowStats } from '../processor/engine/confusion-score.ts';
import { recomputeSiteCommand } from '../processor/recompute-site.ts';
import { rebuildPageViewers, rebuildSessionRollups } from '../shared/db/session-rollups.ts';

const DAY = 86_400_000;

export interface DemoDataOptions {
  events: number;
  siteId: string;
  days?: number;
  pages?: number;
  /** Seed of the generator: the same seed writes the same rows (ids aside). */
  seed?: number;
  now?: number;
  /** Called after every chunk of sessions with the events written so far. */
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

/** mulberry32: small, fast, seedable. */
export function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A sampler of 0..n-1 with Zipf-like weights 1/(i+1)^s: a few popular items and a long tail. */
function zipf(n: number, s: number, rnd: () => number): () => number {
  const cum = new Float64Array(n);
  let total = 0;
  for (let i = 0; i < n; i++) cum[i] = total += 1 / (i + 1) ** s;
  return () => {
    const x = rnd() * total;
    let lo = 0;
    let hi = n - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cum[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
}

/** Picks by weights. */
function weighted<T>(items: readonly (readonly [T, number])[], rnd: () => number): () => T {
  const total = items.reduce((a, [, w]) => a + w, 0);
  return () => {
    let x = rnd() * total;
    for (const [v, w] of items) if ((x -= w) < 0) return v;
    return items[items.length - 1][0];
  };
}

const EVENT_COLUMNS = [
  'site_id',
  'id',
  'ts',
  'received_at',
  'session_id',
  'type',
  'page',
  'signal',
  'name',
  'selector',
  'label',
  'x',
  'y',
  'vx',
  'vy',
  'px',
  'py',
  'value',
  'meta',
  'device',
  'source',
  'app_version',
  'environment',
] as const;
const SIGNAL_COLUMNS = [
  'site_id',
  'event_id',
  'ts',
  'session_id',
  'page',
  'signal_type',
  'selector',
  'label',
  'x',
  'y',
  'vx',
  'vy',
  'px',
  'py',
  'device',
  'environment',
] as const;
const SESSION_COLUMNS = [
  'site_id',
  'id',
  'started_at',
  'last_seen_at',
  'device',
  'source',
  'referrer',
  'app_version',
  'environment',
  'anonymous_id',
  'first_page',
  'last_page',
  'event_count',
  'page_views',
  'signal_count',
  'conversions',
  'revenue',
] as const;
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

/** Where rows go: COPY streams on PostgreSQL, batched inserts on the embedded database. */
interface RowSink {
  add(fields: readonly Field[]): void;
  /** Waits until what was added is handed to the database (backpressure). */
  drain(): Promise<void>;
  end(): Promise<void>;
}

class CopySink implements RowSink {
  private pending = '';
  private readonly stream: Writable;
  private readonly finished: Promise<void>;
  private failure: Error | undefined;

  constructor(client: pg.Client, table: string, columns: readonly string[]) {
    this.stream = client.query(copyFrom(`copy ${table} (${columns.join(', ')}) from stdin`));
    this.finished = new Promise((resolve, reject) => {
      this.stream.on('finish', resolve);
      this.stream.on('error', (err) => {
        this.failure = err;
        reject(err);
      });
    });
    this.finished.catch(() => {});
  }

  add(fields: readonly Field[]): void {
    let line = '';
    for (let i = 0; i < fields.length; i++) {
      const v = fields[i];
      if (i > 0) line += '\t';
      line += v === null ? '\\N' : typeof v === 'number' ? String(v) : escapeCopyText(v);
    }
    this.pending += `${line}\n`;
  }

  async drain(): Promise<void> {
    if (this.failure) throw this.failure;
    if (this.pending.length === 0) return;
    const chunk = this.pending;
    this.pending = '';
    if (!this.stream.write(chunk)) await Promise.race([once(this.stream, 'drain'), this.finished]);
  }

  async end(): Promise<void> {
    await this.drain();
    this.stream.end();
    await this.finished;
  }
}

class InsertSink implements RowSink {
  private rows: Record<string, Field>[] = [];
  private readonly handle: DatabaseHandle;
  private readonly table: 'events' | 'signals' | 'sessions' | 'score_history';
  private readonly columns: readonly string[];

  constructor(handle: DatabaseHandle, table: InsertSink['table'], columns: readonly string[]) {
    this.handle = handle;
    this.table = table;
    this.columns = columns;
  }

  add(fields: readonly Field[]): void {
    const row: Record<string, Field> = {};
    for (let i = 0; i < this.columns.length; i++) row[this.columns[i]] = fields[i];
    this.rows.push(row);
  }

  async drain(): Promise<void> {
    const rows = this.rows;
    this.rows = [];
    for (let i = 0; i < rows.length; i += 1000)
      await this.handle.db
        .insertInto(this.table)
        .values(rows.slice(i, i + 1000) as never)
        .execute();
  }

  end(): Promise<void> {
    return this.drain();
  }
}

interface PageModel {
  path: string;
  /** Chance that a view of the page meets a signal. */
  friction: number;
  elements: () => number;
}

/** Page paths of a shop with a long tail: a few landing pages, then products, blog posts, help articles. */
function pagePath(i: number): string {
  const head = [
    '/',
    '/products',
    '/cart',
    '/checkout',
    '/signup',
    '/login',
    '/pricing',
    '/search',
    '/account',
    '/blog',
  ];
  if (i < head.length) return head[i];
  const k = i - head.length;
  return k % 3 === 0 ? `/products/p-${k}` : k % 3 === 1 ? `/blog/post-${k}` : `/help/article-${k}`;
}

/**
 * Writes `events` events (and the sessions, signals, score history and deploys they imply) for `siteId`, then derives
 * the site's current scores, issues and elements with the processor's recompute.
 */
export async function writeDemoData(
  handle: DatabaseHandle,
  databaseUrl: string | undefined,
  o: DemoDataOptions,
  log: Logger,
): Promise<DemoDataReport> {
  const days = o.days ?? 30;
  const now = o.now ?? Date.now();
  const rnd = prng(o.seed ?? 1);
  const nPages = o.pages ?? 2000;
  const pickPage = zipf(nPages, 1.05, rnd);
  const pages: PageModel[] = Array.from({ length: nPages }, (_, i) => ({
    path: pagePath(i),
    // Most pages are calm; one in twenty is broken somewhere (checkout and signup always are).
    friction: i === 3 || i === 4 ? 0.35 : rnd() < 0.05 ? 0.15 + rnd() * 0.25 : 0.01 + rnd() * 0.03,
    elements: zipf(5 + Math.floor(rnd() ** 3 * 200), 1.2, rnd),
  }));
  const pickSignal = weighted<string>(
    [
      ...SIGNAL_CATALOG.map((d) => [d.type, d.type === 'dead_click' ? 30 : d.type === 'rage_click' ? 20 : 8] as const),
      ['copy_text', 3],
    ],
    rnd,
  );
  const pickDevice = weighted(
    [
      ['desktop', 55],
      ['mobile', 35],
      ['tablet', 10],
    ],
    rnd,
  );
  const pickSource = weighted<string | null>(
    [
      ['google', 35],
      [null, 25],
      ['ads', 15],
      ['newsletter', 10],
      ['partner', 10],
      ['twitter', 5],
    ],
    rnd,
  );
  // A deploy every three days; a session runs the version live when it started.
  const deployEvery = 3 * DAY;
  const firstDeploy = now - days * DAY;
  const versionAt = (t: number) => `1.${Math.floor((t - firstDeploy) / deployEvery)}`;
  const site = o.siteId;

  // Per (day, page): the day's score inputs, folded while the events are generated.
  const history = new Map<string, PageWindowStats & { signals: Record<string, number> }>();
  const stat = (day: string, page: string) => {
    const k = `${day}\u0000${page}`;
    let s = history.get(k);
    if (!s) history.set(k, (s = { sessions: 0, pageViews: 0, signals: {} }));
    return s;
  };

  let clients: pg.Client[] = [];
  let sinks: { events: RowSink; signals: RowSink; sessions: RowSink };
  if (handle.kind === 'postgres') {
    clients = await Promise.all(
      [0, 1, 2].map(async () => {
        const c = new pg.Client({ connectionString: databaseUrl });
        await c.connect();
        return c;
      }),
    );
    sinks = {
      events: new CopySink(clients[0], 'events', EVENT_COLUMNS),
      signals: new CopySink(clients[1], 'signals', SIGNAL_COLUMNS),
      sessions: new CopySink(clients[2], 'sessions', SESSION_COLUMNS),
    };
  } else {
    sinks = {
      events: new InsertSink(handle, 'events', EVENT_COLUMNS),
      signals: new InsertSink(handle, 'signals', SIGNAL_COLUMNS),
      sessions: new InsertSink(handle, 'sessions', SESSION_COLUMNS),
    };
  }

  const started = performance.now();
  let written = 0;
  let signals = 0;
  let conversions = 0;
  let sessionCount = 0;
  try {
    for (let s = 0; written < o.events; s++) {
      const start = now - 10 * 60_000 - Math.floor(rnd() * (days * DAY - 10 * 60_000));
      const sid = `ses-${randomUUID()}`;
      const device = pickDevice();
      const source = pickSource();
      const appVersion = versionAt(start);
      const environment = rnd() < 0.03 ? 'staging' : null;
      // Events per session: 1 + exponential with mean 9, so sessions average ten events.
      const budget = Math.min(o.events - written, 1 + Math.floor(-Math.log(1 - rnd()) * 9));
      let t = start;
      let lastTs = start;
      let n = 0;
      let views = 0;
      let sigs = 0;
      let convs = 0;
      let revenue = 0;
      let first = '';
      let last = '';
      const day = new Date(start).toISOString().slice(0, 10);
      const seen = new Set<string>();
      const emit = (
        type: string,
        page: PageModel,
        extra: { signal?: string; el?: number; value?: number; name?: string },
      ) => {
        const id = randomUUID();
        const ts = new Date(t).toISOString();
        const el = extra.el;
        const selector =
          el === undefined ? null : `#${page.path === '/' ? 'home' : page.path.slice(1).replace(/\//g, '-')}-el-${el}`;
        const label = el === undefined ? null : `Element ${el}`;
        const x = el === undefined ? null : Math.floor(rnd() * 1001);
        const y = el === undefined ? null : Math.floor(rnd() * 1001);
        const vx = el === undefined ? null : Math.floor(rnd() * 1001);
        const vy = el === undefined ? null : Math.floor(rnd() * 1001);
        sinks.events.add([
          site,
          id,
          ts,
          ts,
          sid,
          type,
          page.path,
          extra.signal ?? null,
          extra.name ?? null,
          selector,
          label,
          x,
          y,
          vx,
          vy,
          vx,
          vy,
          extra.value ?? null,
          null,
          device,
          source,
          appVersion,
          environment,
        ]);
        if (type === 'signal') {
          sinks.signals.add([
            site,
            id,
            ts,
            sid,
            page.path,
            extra.signal!,
            selector,
            label,
            x,
            y,
            vx,
            vy,
            vx,
            vy,
            device,
            environment ?? 'production',
          ]);
        }
        if (!first) first = page.path;
        last = page.path;
        lastTs = t;
        n++;
        if (environment === null) {
          const st = stat(day, page.path);
          if (!seen.has(page.path)) {
            seen.add(page.path);
            st.sessions++;
          }
          if (type === 'page_view') st.pageViews++;
          if (type === 'signal') st.signals[extra.signal!] = (st.signals[extra.signal!] ?? 0) + 1;
        }
        t += 2_000 + Math.floor(rnd() * 28_000);
      };
      while (n < budget) {
        const page = pages[pickPage()];
        emit('page_view', page, {});
        views++;
        while (n < budget && rnd() < page.friction) {
          const signal = pickSignal();
          const el = page.elements();
          emit('signal', page, { signal, el });
          sigs++;
          // Rage clicks come in bursts on the same element.
          if (signal === 'rage_click')
            for (let k = 0; k < 2 && n < budget; k++) emit('signal', page, { signal, el }), sigs++;
        }
        if (n < budget && rnd() < 0.04) {
          const value = 10 + Math.floor(rnd() * 190);
          emit('conversion', pages[3], { value });
          convs++;
          revenue += value;
        } else if (n < budget && rnd() < 0.05) emit('custom', page, { name: 'newsletter_signup' });
      }
      sinks.sessions.add([
        site,
        sid,
        new Date(start).toISOString(),
        new Date(lastTs).toISOString(),
        device,
        source,
        null,
        appVersion,
        environment,
        null,
        first,
        last,
        n,
        views,
        sigs,
        convs,
        revenue,
      ]);
      written += n;
      signals += sigs;
      conversions += convs;
      sessionCount++;
      if (s % 2000 === 1999) {
        await Promise.all([sinks.events.drain(), sinks.signals.drain(), sinks.sessions.drain()]);
        o.progress?.(written);
      }
    }
    await Promise.all([sinks.events.end(), sinks.signals.end(), sinks.sessions.end()]);
    o.progress?.(written);
  } finally {
    await Promise.all(clients.map((c) => c.end().catch(() => {})));
  }
  const writeSeconds = (performance.now() - started) / 1000;

  // Daily score history with the engine's formula, each day's prior the site mean of that day.
  const byDay = new Map<string, [string, PageWindowStats & { signals: Record<string, number> }][]>();
  for (const [k, st] of history) {
    const [day, page] = k.split('\u0000');
    const list = byDay.get(day) ?? [];
    list.push([page, st]);
    byDay.set(day, list);
  }
  const historyRows: Field[][] = [];
  const dayScore = new Map<string, number>();
  for (const [day, list] of byDay) {
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
  // The rollups the processor keeps batch by batch (the Explorer's sessions, the pages' viewers): rebuilt from the
  // rows just written.
  await rebuildSessionRollups(handle.db, site);
  await rebuildPageViewers(handle.db, site);
  if (handle.kind === 'postgres') await sql`analyze explore_session_buckets; analyze page_viewers`.execute(handle.db);
  // Current scores, issues and elements: the processor's own recompute over the stored rows.
  const r = await recomputeSiteCommand(handle.db, site, now, true, log);
  log.info(
    { pages: r.pages.checked, issues: r.issues.expected, elements: r.elements.expected },
    'derived scores, issues and elements',
  );
  return {
    events: written,
    sessions: sessionCount,
    signals,
    conversions,
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
