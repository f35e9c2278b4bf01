/**
 * SDK-shaped traffic for the benches: what a real site sends, not what is convenient to generate.
 *
 * Large-site profile (defaults): 100 pages; a hot page (`/p/0`) gets 30% of the traffic and the other 99 share the
 * rest with Zipf weights (1/rank); each page has a long tail of 500 elements, picked with Zipf weights too, so a
 * few elements collect most signals and hundreds see one or two. At 1M sessions a day this is ~300k sessions a day
 * on the hot page.
 *
 * Batches as the SDK flushes them (ingest/sdk/src/transport.ts: on a timer, on page hide, when the buffer fills):
 * mostly 1-10 events (sizes 1, 2, 3 most often), one session per batch. Event mix per event: page_view 45%,
 * signal 35% (dead_click 35%, rage_click 20%, error_encounter 15%, disabled_element_attempt 10%, form_abandon 10%,
 * navigation_loop 5% (page-level: no element), form_restart 5%), conversion 5%, custom 15%. A batch that starts
 * a page starts with its page_view.
 */
import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import { seeded } from '../../shared/seeded-random.ts';
import type { EventBatchMessage } from '../../shared/contracts/ingest.ts';
import type { Database } from '../../shared/db/database.ts';
import { insertOrg, provisionSite } from '../../shared/tenancy/provision.ts';

export interface SdkEvent {
  id: string;
  type: 'page_view' | 'signal' | 'conversion' | 'custom';
  ts: number;
  page: string;
  signal?: string;
  selector?: string;
  label?: string;
  value?: number;
  name?: string;
}

export interface SdkBatch {
  sessionId: string;
  events: SdkEvent[];
}

/** The seeded generator (mulberry32) the SDK scenarios use too, so every run of a bench sends the same traffic. */
export const rng = seeded;

/** Picks an index by cumulative weights. */
function picker(weights: readonly number[]): (r: number) => number {
  const total = weights.reduce((a, b) => a + b, 0);
  const cum: number[] = [];
  let acc = 0;
  for (const w of weights) cum.push((acc += w / total));
  return (r) => {
    let lo = 0;
    let hi = cum.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (r < (cum[mid] as number)) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  };
}

const zipf = (n: number, s = 1): number[] => Array.from({ length: n }, (_, i) => 1 / (i + 1) ** s);

export const SIGNAL_MIX: readonly (readonly [string, number])[] = [
  ['dead_click', 35],
  ['rage_click', 20],
  ['error_encounter', 15],
  ['disabled_element_attempt', 10],
  ['form_abandon', 10],
  ['navigation_loop', 5],
  ['form_restart', 5],
];
const TYPE_MIX: readonly (readonly [SdkEvent['type'], number])[] = [
  ['page_view', 45],
  ['signal', 35],
  ['conversion', 5],
  ['custom', 15],
];
/** SDK batch sizes and their weights: mostly one to a few events. */
export const SDK_BATCH_SIZES: readonly (readonly [number, number])[] = [
  [1, 25],
  [2, 25],
  [3, 15],
  [4, 10],
  [5, 7],
  [6, 5],
  [7, 4],
  [8, 3],
  [9, 3],
  [10, 3],
];

export interface ProfileOptions {
  pages?: number;
  /** Share of the traffic on the hot page. */
  hotShare?: number;
  elementsPerPage?: number;
  seed?: number;
}

/** A generator of SDK batches for the large-site profile. */
export class SiteProfile {
  readonly pages: number;
  private readonly random: () => number;
  private readonly pickPage: (r: number) => number;
  private readonly pickElement: (r: number) => number;
  private readonly pickSignal = picker(SIGNAL_MIX.map(([, w]) => w));
  private readonly pickType = picker(TYPE_MIX.map(([, w]) => w));
  private readonly pickSize = picker(SDK_BATCH_SIZES.map(([, w]) => w));
  private seq = 0;

  constructor(o: ProfileOptions = {}) {
    this.pages = o.pages ?? 100;
    const hot = o.hotShare ?? 0.3;
    const tail = zipf(this.pages - 1);
    const tailSum = tail.reduce((a, b) => a + b, 0);
    this.pickPage = picker([hot, ...tail.map((w) => ((1 - hot) * w) / tailSum)]);
    this.pickElement = picker(zipf(o.elementsPerPage ?? 500, 1.1));
    this.random = rng(o.seed ?? 42);
  }

  /** A page path by the profile's weights. */
  page(): string {
    return `/p/${this.pickPage(this.random())}`;
  }

  /** An SDK-sized batch size (1-10, mostly small). */
  sdkSize(): number {
    return SDK_BATCH_SIZES[this.pickSize(this.random())]![0];
  }

  /** One batch of `size` events for `sessionId` on one page at about `now`. */
  batch(sessionId: string, size: number, now: number, page = this.page()): SdkBatch {
    const events: SdkEvent[] = [];
    const startsPage = this.random() < 0.5;
    for (let j = 0; j < size; j++) {
      const id = `ev-${(this.seq++).toString(36)}-${Math.floor(this.random() * 2 ** 32).toString(36)}`;
      const ts = now - (size - j) * 40;
      const type = j === 0 && startsPage ? 'page_view' : TYPE_MIX[this.pickType(this.random())]![0];
      if (type === 'signal') {
        const signal = SIGNAL_MIX[this.pickSignal(this.random())]![0];
        const pageLevel = signal === 'navigation_loop';
        const el = this.pickElement(this.random());
        events.push(
          pageLevel
            ? { id, type, ts, page, signal }
            : {
                id,
                type,
                ts,
                page,
                signal,
                selector: `main > div:nth-child(${el % 40}) > button.b${el}`,
                label: `Button ${el}`,
              },
        );
      } else if (type === 'conversion') events.push({ id, type, ts, page, name: 'purchase', value: 42 });
      else if (type === 'custom') events.push({ id, type, ts, page, name: 'scroll' });
      else events.push({ id, type, ts, page });
    }
    return { sessionId, events };
  }
}

/** An enterprise org with `count` sites (`s0`, `s1`, …) for a bench's traffic. */
export async function benchSites(db: Kysely<Database>, count: number) {
  const orgId = await insertOrg(db, { name: 'bench', plan: 'enterprise' });
  const sites = await Promise.all(
    Array.from({ length: count }, (_, s) => provisionSite(db, { orgId, name: `s${s}`, url: 'https://bench.example' })),
  );
  return { orgId, sites };
}

/**
 * An SDK-shaped backlog of `total` events as the ingest role publishes it: the large-site profile (seed 3) over
 * `siteIds` in turn and 20k sessions, SDK-sized batches (1-10 events), signals at (500, 500), all received at `now`.
 */
export function* sdkBacklog(o: {
  orgId: string;
  siteIds: readonly string[];
  total: number;
  now: number;
}): Generator<EventBatchMessage> {
  const profile = new SiteProfile({ seed: 3 });
  let events = 0;
  for (let b = 0; events < o.total; b++) {
    const sdk = profile.batch(`bench-${b % 20_000}`, Math.min(profile.sdkSize(), o.total - events), o.now);
    const msg = {
      v: 1,
      batch_id: randomUUID(),
      org_id: o.orgId,
      site_id: o.siteIds[b % o.siteIds.length]!,
      received_at: o.now,
      session_id: sdk.sessionId,
      context: { device: 'desktop', viewport: { w: 1280, h: 800 } },
      events: sdk.events.map((e) => ({
        ...e,
        id: randomUUID(),
        ...(e.type === 'signal' ? { x: 500, y: 500 } : {}),
      })),
    } as unknown as EventBatchMessage;
    events += msg.events.length;
    yield msg;
  }
}
