import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../shared/db/database.ts';
import { Progress } from './progress.ts';
import { SiteProfile } from './workload.ts';

/** Requests in flight at most; past it the sender drops (and counts) the requests it could not send on time. */
const MAX_IN_FLIGHT = 512;

export interface ScoreLag {
  /** Each probe's lag, ms. */
  lagsMs: number[];
  /** Events accepted (202) per second over the run. */
  achievedRate: number;
  failed: number;
  /** Batches due while MAX_IN_FLIGHT requests were outstanding: the target was not reached by that much. */
  dropped: number;
}

/**
 * Score-update lag: an open-loop load of `rate` events/s (SDK-shaped batches of the large-site profile, 1-10 events,
 * sent on a 10 ms schedule whatever the server's answers) runs through ingest while probes send one signal on a
 * never-seen page and time how long until that page's score row exists. The achieved rate is measured, not assumed.
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
  const profile = new SiteProfile({ seed: 5 });
  const start = Date.now();
  const running = () => Date.now() - start < o.seconds * 1000;
  let accepted = 0;
  let failed = 0;
  let dropped = 0;
  let inFlight = 0;
  const pending = new Set<Promise<void>>();
  const steady = (async () => {
    let i = 0;
    let due = 0;
    const t0 = performance.now();
    while (running()) {
      // Open loop: the events due by now are sent now, whether or not earlier requests were answered.
      const target = ((performance.now() - t0) / 1000) * o.rate;
      while (due < target) {
        const b = profile.batch(`steady-${i % 20_000}`, profile.sdkSize(), Date.now());
        due += b.events.length;
        if (inFlight >= MAX_IN_FLIGHT) {
          dropped++;
          continue;
        }
        const body = JSON.stringify({ key: o.keys[i % o.keys.length], session_id: b.sessionId, sent_at: new Date().toISOString(), context: { device: 'desktop', viewport: { w: 1280, h: 800 } }, events: b.events.map((e) => ({ ...e, id: randomUUID() })) });
        i++;
        inFlight++;
        const p: Promise<void> = fetch(o.ingestUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
          .then(async (r) => {
            await r.arrayBuffer();
            if (r.status === 202) accepted += b.events.length;
            else failed++;
          })
          .catch(() => {
            failed++;
          })
          .finally(() => {
            inFlight--;
            pending.delete(p);
          });
        pending.add(p);
      }
      progress.update((Date.now() - start) / 1000);
      await new Promise((r) => setTimeout(r, 10));
    }
    await Promise.all(pending);
  })();
  const lags: number[] = [];
  let n = 0;
  while (running()) {
    const page = `/probe-${n++}`;
    const now = new Date().toISOString();
    const sent = performance.now();
    const r = await fetch(o.ingestUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ key: o.keys[0], session_id: `probe-${n}`, sent_at: now, context: { device: 'desktop', viewport: { w: 1, h: 1 } }, events: [{ id: randomUUID(), type: 'signal', signal: 'rage_click', ts: now, page }] }),
    });
    if (r.status !== 202) continue;
    while (!(await o.db.selectFrom('page_scores').select('page').where('site_id', '=', o.probeSite).where('page', '=', page).executeTakeFirst())) {
      await new Promise((res) => setTimeout(res, 10));
    }
    lags.push(performance.now() - sent);
    await new Promise((res) => setTimeout(res, 200));
  }
  await steady;
  progress.done();
  return { lagsMs: lags, achievedRate: accepted / ((Date.now() - start) / 1000), failed, dropped };
}
