/**
 * The generator of `friction demo --events` (ops/demo-data.ts): sessions hour by hour, every row written straight
 * into row sinks (ops/demo-copy.ts). Each hour draws from its own generator seeded by (seed, hour), so the rows do
 * not depend on how the hours are shared out: on PostgreSQL, worker threads (this module is their entry) take every
 * n-th hour each and COPY on their own connections; on the embedded database the hours run in the caller's thread.
 */
import { randomBytes } from 'node:crypto';
import { isMainThread, parentPort, workerData } from 'node:worker_threads';
import pg from 'pg';
import { CONFUSING_SIGNALS, DIRECT_SOURCE } from '../shared/domain/session-summary.ts';
import { SIGNAL_CATALOG } from '../shared/domain/signal-catalog.ts';
import { BinaryCopySink, Txt, uuidBytes, uuidText, type RowSink, type TableSpec } from './demo-copy.ts';
import { seeded } from '../shared/seeded-random.ts';

export const DAY = 86_400_000;
const HOUR = 3_600_000;

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

/** The element and viewport coordinates events and signals both carry. */
const COORDINATES = [
  ['x', 'int2'],
  ['y', 'int2'],
  ['vx', 'int2'],
  ['vy', 'int2'],
  ['px', 'int2'],
  ['py', 'int2'],
] as const;
export const EVENTS: TableSpec = {
  name: 'events',
  columns: [
    ['site_id', 'uuid'],
    ['id', 'uuid'],
    ['ts', 'ts'],
    ['received_at', 'ts'],
    ['session_id', 'text'],
    ['type', 'text'],
    ['page', 'text'],
    ['signal', 'text'],
    ['name', 'text'],
    ['selector', 'text'],
    ['label', 'text'],
    ...COORDINATES,
    ['value', 'float8'],
    ['device', 'text'],
    ['source', 'text'],
    ['app_version', 'text'],
    ['environment', 'text'],
  ],
};
export const SIGNALS: TableSpec = {
  name: 'signals',
  columns: [
    ['site_id', 'uuid'],
    ['event_id', 'uuid'],
    ['ts', 'ts'],
    ['session_id', 'text'],
    ['page', 'text'],
    ['signal_type', 'text'],
    ['selector', 'text'],
    ['label', 'text'],
    ...COORDINATES,
    ['device', 'text'],
    ['environment', 'text'],
  ],
};
export const SESSIONS: TableSpec = {
  name: 'sessions',
  columns: [
    ['site_id', 'uuid'],
    ['id', 'text'],
    ['started_at', 'ts'],
    ['last_seen_at', 'ts'],
    ['device', 'text'],
    ['source', 'text'],
    ['app_version', 'text'],
    ['environment', 'text'],
    ['first_page', 'text'],
    ['last_page', 'text'],
    ['event_count', 'int4'],
    ['page_views', 'int4'],
    ['signal_count', 'int4'],
    ['conversions', 'int4'],
    ['revenue', 'float8'],
  ],
};
/** The Explorer's per-session rollup row (migration 0220), as the processor derives it from the session. */
export const SESSION_STATE: TableSpec = {
  name: 'explore_session_state',
  columns: [
    ['site_id', 'uuid'],
    ['session_id', 'text'],
    ['environment', 'text'],
    ['hour', 'ts'],
    ['source', 'text'],
    ['cohort', 'text'],
    ['confused', 'bool'],
    ['converted', 'bool'],
    ['bounced', 'bool'],
    ['page_views', 'int4'],
    ['dwell_ms', 'float8'],
    ['last_seen_at', 'ts'],
  ],
};
/** A session's last view of each page it viewed (migration 0222). */
export const PAGE_VIEWERS: TableSpec = {
  name: 'page_viewers',
  columns: [
    ['site_id', 'uuid'],
    ['environment', 'text'],
    ['page', 'text'],
    ['session_id', 'text'],
    ['last_view_at', 'ts'],
  ],
};
/** A session's distinct pages, signal types and event types (migrations 0280 and 0310). */
export const SESSION_KEYS: TableSpec = {
  name: 'explore_session_keys',
  columns: [
    ['site_id', 'uuid'],
    ['session_id', 'text'],
    ['kind', 'text'],
    ['key', 'text'],
  ],
};
/** The Explorer's sums per page (migration 0282): the generator writes the hourly rows, the caller the daily ones. */
export const PAGE_BUCKETS: TableSpec = {
  name: 'explore_page_buckets',
  columns: [
    ['site_id', 'uuid'],
    ['environment', 'text'],
    ['grain', 'text'],
    ['bucket', 'ts'],
    ['page', 'text'],
    ['confused', 'bool'],
    ['converted', 'bool'],
    ['sessions', 'int4'],
    ['page_views', 'int4'],
    ['bounced', 'int4'],
    ['dwell_ms', 'float8'],
  ],
};
/**
 * A page bucket's cell within one hour or day: page, environment (production 0, staging 1), confused, converted.
 * `PAGE_CELLS` cells per page.
 */
export const PAGE_CELLS = 8;
const pageCell = (page: number, staging: boolean, confused: boolean, converted: boolean) =>
  page * PAGE_CELLS + (staging ? 4 : 0) + (confused ? 2 : 0) + (converted ? 1 : 0);
/** What a cell index says: page, staging, confused, converted. */
export const cellParts = (c: number) => ({
  page: Math.floor(c / PAGE_CELLS),
  staging: (c & 4) !== 0,
  confused: (c & 2) !== 0,
  converted: (c & 1) !== 0,
});
const BUCKET_ENVIRONMENTS = [new Txt('production'), new Txt('staging')];

/** One page bucket's row: cell `c` (its page's path `path`) of `bucket` with its sums. */
export function writePageBucket(
  sink: RowSink,
  site: Uint8Array,
  grain: Txt,
  bucket: number,
  c: number,
  path: Txt,
  sums: readonly [sessions: number, pageViews: number, bounced: number, dwellMs: number],
): void {
  const cell = cellParts(c);
  sink.uuid(site);
  sink.text(BUCKET_ENVIRONMENTS[cell.staging ? 1 : 0]);
  sink.text(grain);
  sink.ts(bucket);
  sink.text(path);
  sink.bool(cell.confused);
  sink.bool(cell.converted);
  for (const v of sums) sink.num(v);
  sink.end();
}

interface PageModel {
  path: Txt;
  /** Chance that a view of the page meets a signal. */
  friction: number;
  elements: () => number;
  /** Selector of each element, encoded when first used. */
  selectors: (Txt | undefined)[];
}

/** Page paths of a shop with a long tail: a few landing pages, then products, blog posts, help articles. */
export function pagePath(i: number): string {
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
 * Time-ordered ids (the UUIDv7 layout: 48 bits of milliseconds, then random bits from the seeded generator mixed
 * with a per-run salt). Rows are written hour by hour, so every index on ids, times and session ids takes its
 * inserts near its right edge, in pages already in memory, instead of all over an index larger than the cache.
 */
function idMaker(rnd: () => number) {
  const salt = randomBytes(10);
  const b = new Uint8Array(16);
  return (ms: number): Uint8Array => {
    const hi = Math.floor(ms / 65_536);
    b[0] = hi >>> 24;
    b[1] = (hi >>> 16) & 0xff;
    b[2] = (hi >>> 8) & 0xff;
    b[3] = hi & 0xff;
    b[4] = (ms >>> 8) & 0xff;
    b[5] = ms & 0xff;
    const r1 = (rnd() * 4_294_967_296) >>> 0;
    const r2 = (rnd() * 4_294_967_296) >>> 0;
    b[6] = 0x70 | ((r1 ^ salt[0]) & 0x0f);
    b[7] = ((r1 >>> 8) ^ salt[1]) & 0xff;
    b[8] = 0x80 | (((r1 >>> 16) ^ salt[2]) & 0x3f);
    b[9] = ((r1 >>> 24) ^ salt[3]) & 0xff;
    b[10] = (r2 ^ salt[4]) & 0xff;
    b[11] = ((r2 >>> 8) ^ salt[5]) & 0xff;
    b[12] = ((r2 >>> 16) ^ salt[6]) & 0xff;
    b[13] = ((r2 >>> 24) ^ salt[7]) & 0xff;
    b[14] = salt[8];
    b[15] = salt[9] ^ (r1 & 0xf0);
    return b;
  };
}

/** Share of the day's traffic in each UTC hour (a daytime peak), and weekends a little quieter. */
const hourWeight = (t: number) => {
  const d = new Date(t);
  const diurnal = 1 + 0.6 * Math.sin(((d.getUTCHours() - 8) / 24) * 2 * Math.PI);
  return diurnal * (d.getUTCDay() === 0 || d.getUTCDay() === 6 ? 0.8 : 1);
};

/** What the generator is asked for: the same in every thread. */
export interface GenParams {
  siteId: string;
  seed: number;
  days: number;
  pages: number;
  now: number;
  events: number;
}

/** One hour of session starts and the events its sessions carry. */
export interface HourPlan {
  index: number;
  start: number;
  end: number;
  events: number;
}

/**
 * Sessions start between `days` ago and ten minutes ago, UTC hour by UTC hour (the first and last hours partial);
 * each hour's share of the events by its weight. An hour of the plan is one UTC hour, so the sessions of one hourly
 * page bucket are all generated by one thread, which writes the bucket's row itself.
 */
export function planHours(p: GenParams): HourPlan[] {
  const first = p.now - p.days * DAY;
  const last = p.now - 10 * 60_000;
  const next = (h: number) => Math.min((Math.floor(h / HOUR) + 1) * HOUR, last);
  let total = 0;
  for (let h = first; h < last; h = next(h)) total += hourWeight(h) * (next(h) - h);
  const plan: HourPlan[] = [];
  let cum = 0;
  let before = 0;
  for (let h = first, index = 0; h < last; h = next(h), index++) {
    const end = next(h);
    cum += hourWeight(h) * (end - h);
    const upTo = end >= last ? p.events : Math.min(p.events, Math.round((p.events * cum) / total));
    plan.push({ index, start: h, end, events: upTo - before });
    before = upTo;
  }
  return plan;
}

/** The days of the score history: UTC days from `days` ago to today. */
export const historyDays = (p: GenParams) => ({
  day0: Math.floor((p.now - p.days * DAY) / DAY),
  nDays: Math.floor(p.now / DAY) - Math.floor((p.now - p.days * DAY) / DAY) + 1,
});

/** The signal types the generator draws from: the catalog, and one type it does not know (it weighs nothing). */
export const SIGNAL_TYPES = [...SIGNAL_CATALOG.map((d) => d.type), 'copy_text'];

/** What a run of hours wrote; the history tallies are per (day, page) and (day, page, signal type), production only. */
export interface Tallies {
  events: number;
  sessions: number;
  signals: number;
  conversions: number;
  histSessions: Int32Array;
  histViews: Int32Array;
  histSignals: Int32Array;
  /**
   * The daily page buckets' sums per (day, cell) (`pageCell`), both environments: a day's sessions are shared out
   * among the threads, so the caller adds the threads' sums and writes the daily rows.
   */
  daySessions: Int32Array;
  dayViews: Int32Array;
  dayBounced: Int32Array;
  dayDwell: Float64Array;
}

/** Where one thread's rows go. */
export interface Sinks {
  events: RowSink;
  signals: RowSink;
  sessions: RowSink;
  states: RowSink;
  viewers: RowSink;
  keys: RowSink;
  /** The hourly page buckets; null when the site had some already (the caller then sums them all in SQL). */
  pageBuckets: RowSink | null;
}

/** Writes the sessions of `hours` into `sinks`, calling `progress` with the events of each hour once it is handed over. */
export async function generateHours(
  p: GenParams,
  hours: readonly HourPlan[],
  sinks: Sinks,
  progress: (events: number) => void,
): Promise<Tallies> {
  // The models (pages, their elements, the pickers) draw from the run's seed; the sessions of an hour from the
  // hour's own generator, switched in below.
  let current = seeded(p.seed);
  const rnd = () => current();
  const nPages = p.pages;
  const pickPage = zipf(nPages, 1.05, rnd);
  const pages: PageModel[] = Array.from({ length: nPages }, (_, i) => ({
    path: new Txt(pagePath(i)),
    // Most pages are calm; one in twenty is broken somewhere (checkout and signup always are).
    friction: i === 3 || i === 4 ? 0.35 : rnd() < 0.05 ? 0.15 + rnd() * 0.25 : 0.01 + rnd() * 0.03,
    elements: zipf(5 + Math.floor(rnd() ** 3 * 200), 1.2, rnd),
    selectors: [],
  }));
  const selectorOf = (i: number, el: number): Txt => {
    const page = pages[i];
    let t = page.selectors[el];
    if (!t) {
      const path = page.path.s;
      t = page.selectors[el] = new Txt(`#${path === '/' ? 'home' : path.slice(1).replace(/\//g, '-')}-el-${el}`);
    }
    return t;
  };
  const labels: Txt[] = [];
  const labelOf = (el: number) => (labels[el] ??= new Txt(`Element ${el}`));
  const signalTxt = SIGNAL_TYPES.map((t) => new Txt(t));
  const nTypes = SIGNAL_TYPES.length;
  const confusing = SIGNAL_TYPES.map((t) => CONFUSING_SIGNALS.includes(t));
  const RAGE = SIGNAL_TYPES.indexOf('rage_click');
  const pickSignal = weighted<number>(
    SIGNAL_TYPES.map(
      (t, i) => [i, t === 'dead_click' ? 30 : t === 'rage_click' ? 20 : t === 'copy_text' ? 3 : 8] as const,
    ),
    rnd,
  );
  const DEVICES = ['desktop', 'mobile', 'tablet'].map((d) => new Txt(d));
  const pickDevice = weighted(
    [
      [DEVICES[0], 55],
      [DEVICES[1], 35],
      [DEVICES[2], 10],
    ],
    rnd,
  );
  const pickSource = weighted<Txt | null>(
    [
      [new Txt('google'), 35],
      [null, 25],
      [new Txt('ads'), 15],
      [new Txt('newsletter'), 10],
      [new Txt('partner'), 10],
      [new Txt('twitter'), 5],
    ],
    rnd,
  );
  const DIRECT = new Txt(DIRECT_SOURCE);
  const PAGE_VIEW = new Txt('page_view');
  const SIGNAL = new Txt('signal');
  const CONVERSION = new Txt('conversion');
  const CUSTOM = new Txt('custom');
  const NEWSLETTER = new Txt('newsletter_signup');
  const STAGING = new Txt('staging');
  const PRODUCTION = new Txt('production');
  // A deploy every three days; a session runs the version live when it started.
  const firstDeploy = p.now - p.days * DAY;
  const versions: Txt[] = [];
  const versionAt = (t: number) => {
    const k = Math.floor((t - firstDeploy) / (3 * DAY));
    return (versions[k] ??= new Txt(`1.${k}`));
  };
  const siteBytes = uuidBytes(p.siteId);
  const eventId = idMaker(rnd);
  const { day0, nDays } = historyDays(p);
  const tallies: Tallies = {
    events: 0,
    sessions: 0,
    signals: 0,
    conversions: 0,
    histSessions: new Int32Array(nDays * nPages),
    histViews: new Int32Array(nDays * nPages),
    histSignals: new Int32Array(nDays * nPages * nTypes),
    daySessions: new Int32Array(nDays * nPages * PAGE_CELLS),
    dayViews: new Int32Array(nDays * nPages * PAGE_CELLS),
    dayBounced: new Int32Array(nDays * nPages * PAGE_CELLS),
    dayDwell: new Float64Array(nDays * nPages * PAGE_CELLS),
  };
  const { histSessions, histViews, histSignals } = tallies;
  // Per page, within the current session: whether it was seen (stamp = session number), and its last view.
  const seenStamp = new Int32Array(nPages).fill(-1);
  const viewStamp = new Int32Array(nPages).fill(-1);
  const lastView = new Float64Array(nPages);
  const viewed = new Int32Array(nPages);
  // Per page, within the current session: whether it had an event (any environment), and the list of those pages; the
  // signal types and event types it had likewise (its keys).
  const keyStamp = new Int32Array(nPages).fill(-1);
  const keyed = new Int32Array(nPages);
  const signalStamp = new Int32Array(nTypes).fill(-1);
  const typeStamp = new Int32Array(4).fill(-1);
  const PAGE_KEY = new Txt('page');
  const SIGNAL_KEY = new Txt('signal');
  const TYPE_KEY = new Txt('type');
  // The current hour's page buckets per cell, and the cells it touched.
  const hourSessions = new Int32Array(nPages * PAGE_CELLS);
  const hourViews = new Int32Array(nPages * PAGE_CELLS);
  const hourBounced = new Int32Array(nPages * PAGE_CELLS);
  const hourDwell = new Float64Array(nPages * PAGE_CELLS);
  const hourCells = new Int32Array(nPages * PAGE_CELLS);
  const HOUR_GRAIN = new Txt('hour');
  const { daySessions, dayViews, dayBounced, dayDwell } = tallies;
  const {
    events,
    signals: signalSink,
    sessions: sessionSink,
    states: stateSink,
    viewers: viewerSink,
    keys: keySink,
    pageBuckets: bucketSink,
  } = sinks;
  const all = [events, signalSink, sessionSink, stateSink, viewerSink, keySink, ...(bucketSink ? [bucketSink] : [])];

  for (const hour of hours) {
    current = seeded((Math.imul(p.seed, 0x9e3779b1) ^ Math.imul(hour.index + 1, 0x85ebca6b)) >>> 0);
    let left = hour.events;
    let nCells = 0;
    while (left > 0) {
      const s = tallies.sessions;
      const start = hour.start + Math.floor(rnd() * (hour.end - hour.start));
      const sid = new Txt(`ses-${uuidText(eventId(start))}`);
      const device = pickDevice();
      const source = pickSource();
      const appVersion = versionAt(start);
      const staging = rnd() < 0.03;
      const environment = staging ? STAGING : null;
      // Events per session: 1 + exponential with mean 9, so sessions average ten events.
      const budget = Math.min(left, 1 + Math.floor(-Math.log(1 - rnd()) * 9));
      const dayBase = (Math.floor(start / DAY) - day0) * nPages;
      let t = start;
      let lastTs = start;
      let n = 0;
      let views = 0;
      let sigs = 0;
      let convs = 0;
      let revenue = 0;
      let confused = false;
      let nViewed = 0;
      let nKeyed = 0;
      let firstPage: Txt | null = null;
      let lastPage: Txt | null = null;
      // One event: the raw row, its signal mirror, and the session's and history's tallies. `signal` -1: none.
      const emit = (
        type: Txt,
        typeIndex: number,
        i: number,
        signal: number,
        el: number,
        value: number | null,
        name: Txt | null,
      ) => {
        const page = pages[i];
        const id = eventId(t);
        const selector = el < 0 ? null : selectorOf(i, el);
        const label = el < 0 ? null : labelOf(el);
        const x = el < 0 ? null : Math.floor(rnd() * 1001);
        const y = el < 0 ? null : Math.floor(rnd() * 1001);
        const vx = el < 0 ? null : Math.floor(rnd() * 1001);
        const vy = el < 0 ? null : Math.floor(rnd() * 1001);
        events.uuid(siteBytes);
        events.uuid(id);
        events.ts(t);
        events.ts(t);
        events.text(sid);
        events.text(type);
        events.text(page.path);
        events.text(signal < 0 ? null : signalTxt[signal]);
        events.text(name);
        events.text(selector);
        events.text(label);
        events.num(x);
        events.num(y);
        events.num(vx);
        events.num(vy);
        events.num(vx);
        events.num(vy);
        events.num(value);
        events.text(device);
        events.text(source);
        events.text(appVersion);
        events.text(environment);
        events.end();
        if (signal >= 0) {
          signalSink.uuid(siteBytes);
          signalSink.uuid(id);
          signalSink.ts(t);
          signalSink.text(sid);
          signalSink.text(page.path);
          signalSink.text(signalTxt[signal]);
          signalSink.text(selector);
          signalSink.text(label);
          signalSink.num(x);
          signalSink.num(y);
          signalSink.num(vx);
          signalSink.num(vy);
          signalSink.num(vx);
          signalSink.num(vy);
          signalSink.text(device);
          signalSink.text(environment ?? PRODUCTION);
          signalSink.end();
          if (confusing[signal]) confused = true;
          if (signalStamp[signal] !== s) {
            signalStamp[signal] = s;
            keySink.uuid(siteBytes);
            keySink.text(sid);
            keySink.text(SIGNAL_KEY);
            keySink.text(signalTxt[signal]);
            keySink.end();
          }
        }
        if (keyStamp[i] !== s) {
          keyStamp[i] = s;
          keyed[nKeyed++] = i;
          keySink.uuid(siteBytes);
          keySink.text(sid);
          keySink.text(PAGE_KEY);
          keySink.text(page.path);
          keySink.end();
        }
        if (typeStamp[typeIndex] !== s) {
          typeStamp[typeIndex] = s;
          keySink.uuid(siteBytes);
          keySink.text(sid);
          keySink.text(TYPE_KEY);
          keySink.text(type);
          keySink.end();
        }
        if (type === PAGE_VIEW) {
          if (viewStamp[i] !== s) {
            viewStamp[i] = s;
            viewed[nViewed++] = i;
          }
          lastView[i] = t;
        }
        firstPage ??= page.path;
        lastPage = page.path;
        lastTs = t;
        n++;
        if (!staging) {
          if (seenStamp[i] !== s) {
            seenStamp[i] = s;
            histSessions[dayBase + i]++;
          }
          if (type === PAGE_VIEW) histViews[dayBase + i]++;
          if (signal >= 0) histSignals[(dayBase + i) * nTypes + signal]++;
        }
        t += 2_000 + Math.floor(rnd() * 28_000);
      };
      while (n < budget) {
        const i = pickPage();
        const page = pages[i];
        emit(PAGE_VIEW, 0, i, -1, -1, null, null);
        views++;
        while (n < budget && rnd() < page.friction) {
          const signal = pickSignal();
          const el = page.elements();
          emit(SIGNAL, 1, i, signal, el, null, null);
          sigs++;
          // Rage clicks come in bursts on the same element.
          if (signal === RAGE)
            for (let k = 0; k < 2 && n < budget; k++) emit(SIGNAL, 1, i, signal, el, null, null), sigs++;
        }
        if (n < budget && rnd() < 0.04) {
          const value = 10 + Math.floor(rnd() * 190);
          emit(CONVERSION, 2, 3 % nPages, -1, -1, value, null);
          convs++;
          revenue += value;
        } else if (n < budget && rnd() < 0.05) emit(CUSTOM, 3, i, -1, -1, null, NEWSLETTER);
      }
      sessionSink.uuid(siteBytes);
      sessionSink.text(sid);
      sessionSink.ts(start);
      sessionSink.ts(lastTs);
      sessionSink.text(device);
      sessionSink.text(source);
      sessionSink.text(appVersion);
      sessionSink.text(environment);
      sessionSink.text(firstPage);
      sessionSink.text(lastPage);
      sessionSink.num(n);
      sessionSink.num(views);
      sessionSink.num(sigs);
      sessionSink.num(convs);
      sessionSink.num(revenue);
      sessionSink.end();
      // The rollups the processor keeps batch by batch, with its definitions (shared/db/session-rollups.ts).
      stateSink.uuid(siteBytes);
      stateSink.text(sid);
      stateSink.text(staging ? STAGING : PRODUCTION);
      stateSink.ts(Math.floor(start / HOUR) * HOUR);
      stateSink.text(source ?? DIRECT);
      stateSink.text(appVersion);
      stateSink.bool(confused);
      stateSink.bool(convs > 0);
      stateSink.bool(views < 2);
      stateSink.num(views);
      stateSink.num(lastTs - start);
      stateSink.ts(lastTs);
      stateSink.end();
      for (let k = 0; k < nViewed; k++) {
        const i = viewed[k];
        viewerSink.uuid(siteBytes);
        viewerSink.text(staging ? STAGING : PRODUCTION);
        viewerSink.text(pages[i].path);
        viewerSink.text(sid);
        viewerSink.ts(lastView[i]);
        viewerSink.end();
      }
      // The page buckets: the session once on each page it had an event on, with its whole-session sums.
      for (let k = 0; k < nKeyed; k++) {
        const c = pageCell(keyed[k], staging, confused, convs > 0);
        if (hourSessions[c]++ === 0) hourCells[nCells++] = c;
        hourViews[c] += views;
        if (views < 2) hourBounced[c]++;
        hourDwell[c] += lastTs - start;
      }
      left -= n;
      tallies.events += n;
      tallies.signals += sigs;
      tallies.conversions += convs;
      tallies.sessions++;
    }
    // The hour's page buckets are complete (its sessions are this thread's alone): its rows, and its sums added to
    // its day's.
    const bucket = Math.floor(hour.start / HOUR) * HOUR;
    const dayBase = (Math.floor(hour.start / DAY) - day0) * nPages * PAGE_CELLS;
    for (let k = 0; k < nCells; k++) {
      const c = hourCells[k];
      if (bucketSink)
        writePageBucket(bucketSink, siteBytes, HOUR_GRAIN, bucket, c, pages[Math.floor(c / PAGE_CELLS)].path, [
          hourSessions[c],
          hourViews[c],
          hourBounced[c],
          hourDwell[c],
        ]);
      daySessions[dayBase + c] += hourSessions[c];
      dayViews[dayBase + c] += hourViews[c];
      dayBounced[dayBase + c] += hourBounced[c];
      dayDwell[dayBase + c] += hourDwell[c];
      hourSessions[c] = hourViews[c] = hourBounced[c] = hourDwell[c] = 0;
    }
    await Promise.all(all.map((k) => k.flush()));
    progress(hour.events);
  }
  await Promise.all(all.map((k) => k.close()));
  return tallies;
}

/** A worker thread's share: every hour of `hours`, through binary COPY on its own connections. */
export interface WorkerJob {
  kind: 'friction-demo';
  params: GenParams;
  hours: HourPlan[];
  databaseUrl: string;
  /** Whether to write the hourly page buckets (the site has none yet). */
  pageBuckets: boolean;
}

/** A COPY into `spec`'s table on a connection of its own (end the client after closing the sink). */
export async function openCopySink(
  databaseUrl: string,
  spec: TableSpec,
): Promise<{ sink: RowSink; client: pg.Client }> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  return { sink: new BinaryCopySink(client, spec), client };
}

/** Opens one COPY per table on its own connection. */
export async function copySinks(
  databaseUrl: string,
  pageBuckets: boolean,
): Promise<{ sinks: Sinks; clients: pg.Client[] }> {
  const clients: pg.Client[] = [];
  const open = async (spec: TableSpec) => {
    const { sink, client } = await openCopySink(databaseUrl, spec);
    clients.push(client);
    return sink;
  };
  const [events, signals, sessions, states, viewers, keys, buckets] = await Promise.all(
    [EVENTS, SIGNALS, SESSIONS, SESSION_STATE, PAGE_VIEWERS, SESSION_KEYS, ...(pageBuckets ? [PAGE_BUCKETS] : [])].map(
      open,
    ),
  );
  return { sinks: { events, signals, sessions, states, viewers, keys, pageBuckets: buckets ?? null }, clients };
}

async function runWorker(job: WorkerJob): Promise<void> {
  const { sinks, clients } = await copySinks(job.databaseUrl, job.pageBuckets);
  try {
    const tallies = await generateHours(job.params, job.hours, sinks, (n) => parentPort!.postMessage({ progress: n }));
    parentPort!.postMessage({ tallies });
  } finally {
    await Promise.all(clients.map((c) => c.end().catch(() => {})));
  }
}

if (!isMainThread && (workerData as WorkerJob | undefined)?.kind === 'friction-demo') await runWorker(workerData);
