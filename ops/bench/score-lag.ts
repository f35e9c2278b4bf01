import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../shared/db/database.ts';
import { openLoad } from './load.ts';
import { WindowSet } from './open-loop.ts';
import { Progress } from './progress.ts';
import { SiteProfile } from './workload.ts';

/** Requests in flight at most; past it the sender drops (and counts) the requests it could not send on time. */
export const MAX_IN_FLIGHT = 512;
/** A probe whose score row has not appeared after this long is counted as lost, so a stalled processor ends the run. */
const PROBE_GIVE_UP_MS = 60_000;

export interface ScoreLag {
  /** Each probe's lag, ms. */
  lagsMs: number[];
  /** Events accepted (202) per second over the run. */
  achievedRate: number;
  failed: number;
  /** Batches due while MAX_IN_FLIGHT requests were outstanding: the target was not reached by that much. */
  dropped: number;
  /** The latest a steady batch was sent after it fell due, ms. */
  maxLateMs: number;
}

/** The open-loop traffic's body: an SDK batch of the large-site profile as the SDK posts it (fresh event ids). */
export function steadyTraffic(keys: readonly string[], seed = 5): () => { body: string; events: number } {
  const profile = new SiteProfile({ seed });
  let i = 0;
  return () => {
    const b = profile.batch(`steady-${i % 20_000}`, profile.sdkSize(), Date.now());
    const key = keys[i++ % keys.length]!;
    const body = JSON.stringify({
      key,
      session_id: b.sessionId,
      sent_at: new Date().toISOString(),
      context: { device: 'desktop', viewport: { w: 1280, h: 800 } },
      events: b.events.map((e) => ({ ...e, id: randomUUID() })),
    });
    return { body, events: b.events.length };
  };
}

/**
 * Score-update probes until `running()` turns false: one signal on a never-seen page, timed until that page's score
 * row exists, then 200 ms apart. Each accepted probe's event and its lag go into `windows` (by send time) when given.
 */
export async function runProbes(o: {
  db: Kysely<Database>;
  ingestUrl: string;
  key: string;
  probeSite: string;
  running: () => boolean;
  windows?: WindowSet;
  windowStart?: number;
}): Promise<{ lagsMs: number[]; lost: number }> {
  const lags: number[] = [];
  let lost = 0;
  let n = 0;
  const start = o.windowStart ?? performance.now();
  while (o.running()) {
    const page = `/probe-${n++}`;
    const now = new Date().toISOString();
    const sent = performance.now();
    const r = await fetch(o.ingestUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({
        key: o.key,
        session_id: `probe-${n}`,
        sent_at: now,
        context: { device: 'desktop', viewport: { w: 1, h: 1 } },
        events: [{ id: randomUUID(), type: 'signal', signal: 'rage_click', ts: now, page }],
      }),
    }).catch(() => undefined);
    if (r) await r.arrayBuffer();
    if (r?.status !== 202) continue;
    if (o.windows) o.windows.at((performance.now() - start) / 1000).acceptedEvents += 1;
    let found = false;
    while (performance.now() - sent < PROBE_GIVE_UP_MS) {
      if (
        await o.db
          .selectFrom('page_scores')
          .select('page')
          .where('site_id', '=', o.probeSite)
          .where('page', '=', page)
          .executeTakeFirst()
      ) {
        found = true;
        break;
      }
      await new Promise((res) => setTimeout(res, 10));
    }
    if (!found) {
      lost++;
      continue;
    }
    const lag = performance.now() - sent;
    lags.push(lag);
    o.windows?.at((sent - start) / 1000).lagsMs.push(lag);
    await new Promise((res) => setTimeout(res, 200));
  }
  return { lagsMs: lags, lost };
}

/**
 * Score-update lag: an open-loop load of `rate` events/s (SDK-shaped batches of the large-site profile, 1-10 events,
 * sent on schedule whatever the server's answers: load.ts) runs through ingest while probes (runProbes) time how
 * long a signal on a never-seen page takes to get its score row. The achieved rate is measured, not assumed.
 */
export async function measureScoreLag(o: {
  db: Kysely<Database>;
  ingestUrl: string;
  keys: readonly string[];
  probeSite: string;
  rate: number;
  seconds: number;
}): Promise<ScoreLag> {
  const progress = new Progress(`score lag @${o.rate}/s`, o.seconds);
  const next = steadyTraffic(o.keys);
  let sending = true;
  const steady = openLoad({
    url: o.ingestUrl,
    headers: { 'content-type': 'application/json' },
    okStatus: 202,
    eventsPerSecond: o.rate,
    next,
    seconds: o.seconds,
    maxInFlight: MAX_IN_FLIGHT,
    onTick: (elapsed) => progress.update(elapsed),
  }).finally(() => (sending = false));
  const probes = await runProbes({
    db: o.db,
    ingestUrl: o.ingestUrl,
    key: o.keys[0]!,
    probeSite: o.probeSite,
    running: () => sending,
  });
  const load = await steady;
  progress.done();
  return {
    lagsMs: probes.lagsMs,
    achievedRate: (load.acceptedEvents + probes.lagsMs.length) / load.seconds,
    failed: load.failedBatches,
    dropped: load.droppedBatches,
    maxLateMs: load.maxLateMs,
  };
}
