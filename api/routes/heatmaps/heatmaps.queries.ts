import { sql, type Kysely } from 'kysely';
import type { Database } from '../../../shared/db/database.ts';
import { HOUR_MS } from '../../../shared/db/page-heatmap-hours.ts';
import { PREPARED } from '../../../shared/db/prepared-reads.ts';
import { onPage, type PageScope } from '../../../shared/db/scope.ts';

/**
 * Signal types an element heatmap shows (spec): clicks that went nowhere or were refused. `element_heatmap_clicks_idx`
 * (migration 0330) holds exactly these: a change here needs a new index.
 */
export const ELEMENT_HEATMAP_SIGNALS = ['rage_click', 'dead_click', 'disabled_element_attempt'] as const;
/** The element heatmap draws from this many most recent matching signals (spec). */
export const ELEMENT_HEATMAP_SOURCE = 800;
/** At most this many element points (spec). */
export const ELEMENT_HEATMAP_MAX_POINTS = 300;
/** At most this many page points (spec). */
export const PAGE_HEATMAP_MAX_POINTS = 500;
/** Days a page heatmap covers (spec). */
export const PAGE_HEATMAP_DAYS = 30;
/**
 * Up to this step (k) the page heatmap numbers the window's signals in one ordered walk (at most cap × k of them)
 * instead of a descent per pick: a descent and its walk into the hour cost about as much as numbering 16 entries
 * (about 6 µs against 0.35 µs an entry at 10M demo events, docs/query-performance.md), so either way a request reads
 * a bounded number of entries.
 */
export const PAGE_HEATMAP_WALK_MAX_STEP = 16;

/**
 * The most recent ELEMENT_HEATMAP_SOURCE clicking signals on the element that carry element coordinates,
 * oldest first (x, y: 0..1000 as stored). Ordered by time in SQL; the time itself is not selected (the answer has
 * none, and parsing 800 timestamps into dates was most of the rows' decoding). They come as one JSON array of
 * [type, x, y] in the index's order (newest first), reversed here: one JSON.parse instead of 800 rows decoded by the
 * driver, the largest part of the route's Node time.
 */
export async function recentElementSignals(db: Kysely<Database>, s: PageScope, selector: string) {
  const recent = db
    .selectFrom('signals')
    .select(['signal_type', 'x', 'y'])
    .where(onPage(s))
    .where('selector', '=', selector)
    .where('signal_type', 'in', [...ELEMENT_HEATMAP_SIGNALS])
    .where('x', 'is not', null)
    .where('y', 'is not', null)
    .orderBy('ts', 'desc')
    .limit(ELEMENT_HEATMAP_SOURCE);
  // json_agg without an order of its own keeps its input's: the subquery's, newest first.
  // Not PREPARED: a generic plan cannot prove element_heatmap_clicks_idx's predicate from the types as parameters,
  // and read the element's whole history instead (the route's p95 doubled in the bench).
  const row = await db
    .selectFrom(recent.as('r'))
    .select(sql<string | null>`json_agg(json_build_array(r.signal_type, r.x, r.y))::text`.as('signals'))
    .executeTakeFirst();
  const list = JSON.parse(row?.signals ?? '[]') as [string, number, number][];
  const out: { signal_type: string; x: number; y: number }[] = new Array(list.length);
  for (let i = 0; i < list.length; i++) {
    const [signal_type, x, y] = list[list.length - 1 - i];
    out[i] = { signal_type, x, y };
  }
  return out;
}

export interface PageHeatmapRow {
  signal_type: string;
  vx: number;
  vy: number;
  px: number | null;
  py: number | null;
  selector: string | null;
}

/**
 * Signals of the page with viewport coordinates over the last PAGE_HEATMAP_DAYS, `device` `mobile` meaning phones
 * and tablets: a systematic sample of at most PAGE_HEATMAP_MAX_POINTS spread evenly over the period in time order
 * (every k-th signal in (ts, event_id) order, from the first; k = ceil(total / cap)), so a busy last day does not
 * crowd out the month, and the total it was drawn from.
 */
export async function sampledPageSignals(
  db: Kysely<Database>,
  s: PageScope,
  device: 'desktop' | 'mobile' | undefined,
  now: Date,
  walkMaxStep = PAGE_HEATMAP_WALK_MAX_STEP,
): Promise<{ rows: PageHeatmapRow[]; total: number }> {
  const { points, total } = await pickedPoints(db, s, device, now, walkMaxStep, 'rows');
  const list = JSON.parse(points) as [string, number, number, number | null, number | null, string | null][];
  const rows: PageHeatmapRow[] = list.map(([signal_type, vx, vy, px, py, selector]) => ({
    signal_type,
    vx,
    vy,
    px,
    py,
    selector,
  }));
  return { rows, total };
}

/**
 * The same sample as the page heatmap's `points` (presentPageHeatmap's JSON text: coordinates 0..1, `px`/`py` only
 * when both were sent, `el` only for a non-empty selector), written by the database, and its total: the route sends
 * the text as it is instead of parsing 500 rows and serializing 500 points. Byte for byte JSON.stringify's output:
 * the coordinates are smallints over 1000 as float8 (the same IEEE division as JavaScript's, and PostgreSQL's float8
 * text is the shortest that reads back, as JavaScript's is, in plain notation for 0.001 up to 1e15), the texts go
 * through to_json (the same escapes). page-sample.int.test.ts holds it to presentPageHeatmap's.
 */
export function pageHeatmapPoints(
  db: Kysely<Database>,
  s: PageScope,
  device: 'desktop' | 'mobile' | undefined,
  now: Date,
  walkMaxStep = PAGE_HEATMAP_WALK_MAX_STEP,
): Promise<{ points: string; total: number }> {
  return pickedPoints(db, s, device, now, walkMaxStep, 'answer');
}

/**
 * The sample as one JSON array, `rows` of positional rows (signal_type, vx, vy, px, py, selector) or `answer` of the
 * route's points, and its total.
 *
 * Not a pass over the window: the total is the sum of the page's hours in `page_heatmap_hours` (migration 0380; the
 * window's first, partial hour counted from `signals`), which also tells each pick's hour and its position in it
 * (`pagePicks`); each pick is then one descent of `page_heatmap_sample_idx` into its hour and a walk to it from the
 * nearer end of the hour (at most half the hour's signals), or, for a step up to PAGE_HEATMAP_WALK_MAX_STEP, one walk
 * numbering at most cap × step signals. The same rows in the same order as numbering the whole window
 * (page-sample.int.test.ts holds them to it). Two statements, not one: planned together, the picks' count was unknown
 * to the planner (a series per hour, 1,000 rows each by default), and its estimate crossed the JIT threshold (150-190
 * ms of compiling a request at 10M). Both are kept prepared (PREPARED): planned each call, their planning cost the
 * server about as much as running them on a small page.
 */
async function pickedPoints(
  db: Kysely<Database>,
  s: PageScope,
  device: 'desktop' | 'mobile' | undefined,
  now: Date,
  walkMaxStep: number,
  format: 'rows' | 'answer',
): Promise<{ points: string; total: number }> {
  const since = now.getTime() - PAGE_HEATMAP_DAYS * 86_400_000;
  const firstHour = Math.ceil(since / HOUR_MS) * HOUR_MS;
  const devices = device === undefined ? null : device === 'desktop' ? ['desktop'] : ['mobile', 'tablet'];
  const ofDevice = (alias: string) =>
    devices === null ? sql`true` : sql`${sql.ref(`${alias}.device`)} in (${sql.join(devices)})`;
  const page = (alias: string) =>
    sql`${sql.ref(`${alias}.site_id`)} = ${s.site_id} and ${sql.ref(`${alias}.environment`)} = ${s.environment}
        and ${sql.ref(`${alias}.page`)} = ${s.page}`;
  const located = sql`${page('g')} and g.vx is not null and g.vy is not null and ${ofDevice('g')}`;
  // NOTE: raw SQL: a count and a JSON array of the hours (epoch ms, signals) in one round trip.
  const counted = await sql<{ head: number; hours: string | null }>`${PREPARED}
    select (select count(*)::int from signals g
            where ${located} and g.ts >= ${new Date(since)} and g.ts < ${new Date(firstHour)}) as head,
           (select json_agg(json_build_array((extract(epoch from c.hour) * 1000)::float8, c.n) order by c.hour)::text
            from (select h.hour, sum(h.signals)::int as n from page_heatmap_hours h
                  where ${page('h')} and h.hour >= ${new Date(firstHour)} and ${ofDevice('h')}
                  group by h.hour) c
            where c.n > 0) as hours`.execute(db);
  const { head, hours } = counted.rows[0];
  const spans: [from: number, to: number, n: number][] = head > 0 ? [[since, firstHour, head]] : [];
  for (const [hour, n] of JSON.parse(hours ?? '[]') as [number, number][]) spans.push([hour, hour + HOUR_MS, n]);
  const picks = pagePicks(spans, PAGE_HEATMAP_MAX_POINTS);
  if (picks.from.length === 0) return { points: '[]', total: 0 };
  // NOTE: raw SQL: a lateral descent per pick, its offset from the outer row, which the builder cannot say; or, for a
  // small step, the window numbered (the total is known: one window function). The picks come back as one JSON array:
  // one JSON.parse (or none) instead of the driver decoding 500 rows.
  const point =
    format === 'rows'
      ? (a: string) =>
          sql`json_build_array(${sql.join(['signal_type', 'vx', 'vy', 'px', 'py', 'selector'].map((c) => sql.ref(`${a}.${c}`)))})::text`
      : (a: string) => {
          const unit = (c: string) => sql`(${sql.ref(`${a}.${c}`)}::float8 / 1000)::text`;
          return sql`'{"vx":' || ${unit('vx')} || ',"vy":' || ${unit('vy')}
            || case when ${sql.ref(`${a}.px`)} is not null and ${sql.ref(`${a}.py`)} is not null
                 then ',"px":' || ${unit('px')} || ',"py":' || ${unit('py')} else '' end
            || ',"signal":' || to_json(${sql.ref(`${a}.signal_type`)})::text
            || case when ${sql.ref(`${a}.selector`)} <> '' then ',"el":' || to_json(${sql.ref(`${a}.selector`)})::text else '' end
            || '}'`;
        };
  const columns = sql`g.signal_type, g.vx, g.vy, g.px, g.py, g.selector`;
  const picked =
    picks.step <= walkMaxStep
      ? await sql<{ points: string | null }>`${PREPARED}
          select '[' || string_agg(${point('m')}, ',' order by m.rn) || ']' as points
          from (select ${columns}, row_number() over (order by g.ts, g.event_id) as rn
                from signals g where ${located} and g.ts >= ${new Date(since)}) m
          where (m.rn - 1) % ${picks.step} = 0`.execute(db)
      : // Each pick walked to from the nearer end of its span: forwards `skip` entries, or backwards `n - 1 - skip`
        // (a one-time filter on the pick's direction runs only one of the two scans).
        await sql<{ points: string | null }>`${PREPARED}
          select '[' || string_agg(${point('x')}, ',' order by p.j) || ']' as points
          from unnest(${arrayText(picks.from)}::float8[], ${arrayText(picks.to)}::float8[], ${arrayText(picks.skip)}::int[],
                      ${arrayText(picks.back.map((b) => (b ? 't' : 'f')))}::bool[])
               with ordinality as p(lo, hi, skip, back, j)
          cross join lateral (
            (select ${columns} from signals g
             where not p.back and ${located} and g.ts >= to_timestamp(p.lo / 1000) and g.ts < to_timestamp(p.hi / 1000)
             order by g.ts, g.event_id offset p.skip limit 1)
            union all
            (select ${columns} from signals g
             where p.back and ${located} and g.ts >= to_timestamp(p.lo / 1000) and g.ts < to_timestamp(p.hi / 1000)
             order by g.ts desc, g.event_id desc offset p.skip limit 1)
          ) x`.execute(db);
  return { points: picked.rows[0]?.points ?? '[]', total: picks.total };
}

/**
 * An array parameter as its PostgreSQL text, for numbers and booleans only (nothing to quote): the driver would quote
 * and escape each of the picks' 2,000 elements one by one.
 */
const arrayText = (values: readonly (number | string)[]): string => `{${values.join(',')}}`;

/**
 * Where the sample's picks are (pure): given the window's spans in time order (from, to, signals in it), the total,
 * and for every k-th signal (positions 0, k, 2k… of the window, k = max(ceil(total / cap), 1), as the numbered sample
 * computes it) the span it is in and where in the span: `skip` signals of the span come before it (`back` false), or,
 * when it is in the span's later half, `skip` signals come after it (`back` true).
 */
export function pagePicks(spans: readonly (readonly [from: number, to: number, n: number])[], cap: number) {
  let total = 0;
  for (const [, , n] of spans) total += n;
  const k = Math.max(Math.ceil(total / cap), 1);
  const from: number[] = [];
  const to: number[] = [];
  const skip: number[] = [];
  const back: boolean[] = [];
  let start = 0;
  let at = 0;
  for (const [lo, hi, n] of spans) {
    for (; at < start + n && at < total; at += k) {
      const before = at - start;
      const after = n - 1 - before;
      from.push(lo);
      to.push(hi);
      back.push(after < before);
      skip.push(after < before ? after : before);
    }
    start += n;
  }
  return { total, step: k, from, to, skip, back };
}
