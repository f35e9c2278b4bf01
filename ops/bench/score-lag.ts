import { randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Database } from '../../shared/db/database.ts';
import { Progress } from './progress.ts';

const SIGNALS = ['rage_click', 'dead_click', 'disabled_element_attempt', 'error_encounter', 'form_abandon'];

function steadyBatch(i: number, key: string, signalHeavy: boolean) {
  const now = Date.now();
  const page = `/steady/${i % 50}`;
  const events = Array.from({ length: 20 }, (_, j) => {
    const base = { id: randomUUID(), ts: new Date(now - (20 - j) * 50).toISOString(), page };
    const signal = signalHeavy ? j % 5 !== 0 : j % 3 === 0;
    return signal ? { ...base, type: 'signal', signal: SIGNALS[(i + j) % SIGNALS.length], selector: `#el-${(i + j) % 6}`, label: 'Button' } : { ...base, type: 'page_view' };
  });
  return { key, session_id: `steady-${i % 2000}`, sent_at: new Date(now).toISOString(), context: { device: 'desktop', viewport: { w: 1280, h: 800 } }, events };
}

/**
 * Score-update lag: while a steady load of `rate` events/s (20-event batches over `keys`) runs through ingest,
 * probes send one signal on a never-seen page and time how long until that page's score row exists.
 * Returns each probe's lag in ms.
 */
export async function measureScoreLag(o: {
  db: Kysely<Database>;
  ingestUrl: string;
  keys: readonly string[];
  probeSite: string;
  rate: number;
  seconds: number;
  signalHeavy?: boolean;
}): Promise<number[]> {
  const progress = new Progress(`score lag @${o.rate}/s`, o.seconds);
  const start = Date.now();
  const running = () => Date.now() - start < o.seconds * 1000;
  const steady = (async () => {
    let i = 0;
    while (running()) {
      const tick = Date.now();
      const n = Math.max(1, Math.round(o.rate / 20 / 10));
      await Promise.all(
        Array.from({ length: n }, () => {
          const body = steadyBatch(i, o.keys[i % o.keys.length], o.signalHeavy ?? false);
          i++;
          return fetch(o.ingestUrl, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }).then((r) => r.arrayBuffer());
        }),
      );
      progress.update((Date.now() - start) / 1000);
      await new Promise((r) => setTimeout(r, Math.max(0, 100 - (Date.now() - tick))));
    }
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
  return lags;
}
