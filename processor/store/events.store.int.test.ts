import test from 'ava';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { EventBatchMessage, StreamEvent } from '../../shared/contracts/ingest.ts';
import { openDatabase, type DatabaseHandle } from '../../shared/db/connection.ts';
import { createTestDatabase } from '../../shared/testing/database.ts';
import { storeEvents } from './events.store.ts';
import { loadWindowEvents } from './scores.store.ts';
import { loadSignalEvents } from './issues.store.ts';
import { openEmbeddedTestDatabase } from '../../shared/testing/embedded-template.ts';

// The same store against both databases: PostgreSQL takes the COPY path (and its ON CONFLICT fallback when a
// batch comes back), the embedded PGlite the multi-row insert path.
const backends: Record<string, { handle?: DatabaseHandle; drop?: () => Promise<void> }> = { postgres: {}, pglite: {} };

test.before(async () => {
  const scratch = await createTestDatabase('events_store');
  backends.postgres = { handle: await openDatabase({ url: scratch.url, dataDir: '' }), drop: scratch.drop };
  const lite = await openEmbeddedTestDatabase();
  backends.pglite = { handle: lite };
});
test.after.always(async () => {
  for (const b of Object.values(backends)) {
    await b.handle?.close();
    await b.drop?.();
  }
});

const now = Date.now();
let seq = 0;
const event = (over: Partial<StreamEvent> = {}): StreamEvent => ({
  id: randomUUID(),
  type: 'custom',
  name: 'scroll',
  ts: now - 1000 + seq++,
  page: '/p',
  ...over,
});
const signal = (over: Partial<StreamEvent> = {}): StreamEvent =>
  event({
    type: 'signal',
    signal: 'rage_click',
    name: undefined,
    selector: '#buy',
    label: 'Buy',
    x: 10,
    y: 20,
    vx: 30,
    vy: 40,
    px: 50,
    py: 60,
    ...over,
  });
const batch = (siteId: string, events: StreamEvent[], session = 's-1'): EventBatchMessage => ({
  v: 1,
  batch_id: randomUUID(),
  org_id: randomUUID(),
  site_id: siteId,
  received_at: now,
  session_id: session,
  context: { device: 'desktop', viewport: { w: 1280, h: 800 } },
  events,
});

async function counts(h: DatabaseHandle, siteId: string) {
  const q = (t: 'events' | 'signals') =>
    sql<{ n: number }>`select count(*)::int as n from ${sql.table(t)} where site_id = ${siteId}`.execute(h.db);
  return { events: (await q('events')).rows[0].n, signals: (await q('signals')).rows[0].n };
}

for (const name of Object.keys(backends)) {
  const store = (batches: EventBatchMessage[]) => backends[name].handle!.bulk((tx) => storeEvents(tx, batches));

  test(`${name}: new events come back as fresh, signal events are projected into signals`, async (t) => {
    const h = backends[name].handle!;
    const site = randomUUID();
    const batches = [batch(site, [event(), signal(), event()]), batch(site, [signal({ signal: 'dead_click' })], 's-2')];
    const fresh = await store(batches);
    t.is(fresh.length, 4);
    t.deepEqual(await counts(h, site), { events: 4, signals: 2 });
    const row = await sql<{
      signal_type: string;
      selector: string;
      x: number;
      py: number;
      session_id: string;
      device: string;
    }>`
      select signal_type, selector, x, py, session_id, device from signals where site_id = ${site} and signal_type = 'rage_click'`.execute(
      h.db,
    );
    t.deepEqual(row.rows[0], {
      signal_type: 'rage_click',
      selector: '#buy',
      x: 10,
      py: 60,
      session_id: 's-1',
      device: 'desktop',
    });
  });

  test(`${name}: a redelivered fetch stores nothing and returns nothing; a partly stored one returns only the new events`, async (t) => {
    const h = backends[name].handle!;
    const site = randomUUID();
    const first = [batch(site, [event(), signal()])];
    t.is((await store(first)).length, 2);
    t.deepEqual(await store(first), []);
    t.deepEqual(await counts(h, site), { events: 2, signals: 1 });

    const added = signal({ selector: '#new' });
    const mixed = [first[0], batch(site, [added, first[0].events[1]])];
    const fresh = await store(mixed);
    t.deepEqual(
      fresh.map((e) => e.id),
      [added.id],
    );
    t.is(fresh[0].selector, '#new');
    t.deepEqual(await counts(h, site), { events: 3, signals: 2 });
  });

  test(`${name}: the same event twice in one fetch is stored and returned once`, async (t) => {
    const h = backends[name].handle!;
    const site = randomUUID();
    const e = signal();
    const fresh = await store([batch(site, [e, event()]), batch(site, [e])]);
    t.is(fresh.length, 2);
    t.deepEqual(await counts(h, site), { events: 2, signals: 1 });
  });

  test(`${name}: text with tabs, newlines, backslashes and \\N round-trips exactly`, async (t) => {
    const h = backends[name].handle!;
    const site = randomUUID();
    const nasty = 'a\tb\nc\\d\\N\re "quoted" ünïcödé 🙂';
    const e = signal({ selector: nasty, label: nasty, page: `/p/${nasty}`, meta: { note: nasty } });
    await store([batch(site, [e], `sess ${nasty}`)]);
    const { rows } = await sql<{
      selector: string;
      label: string;
      page: string;
      session_id: string;
      meta: { note: string };
    }>`
      select selector, label, page, session_id, meta from events where site_id = ${site}`.execute(h.db);
    t.deepEqual(rows[0], {
      selector: nasty,
      label: nasty,
      page: `/p/${nasty}`,
      session_id: `sess ${nasty}`,
      meta: { note: nasty },
    });
    const s = await sql<{ selector: string }>`select selector from signals where site_id = ${site}`.execute(h.db);
    t.is(s.rows[0].selector, nasty);
  });

  test(`${name}: a row the table refuses fails the whole transaction, nothing of it stored`, async (t) => {
    const h = backends[name].handle!;
    const site = randomUUID();
    // 40,000 does not fit the smallint coordinate columns; the stream contract only promises an integer.
    await t.throwsAsync(store([batch(site, [event(), signal({ x: 40_000 })])]));
    t.deepEqual(await counts(h, site), { events: 0, signals: 0 });
  });
}

for (const kind of ['postgres', 'pglite'] as const) {
  test(`${kind}: the start-up rebuild reads a site's window in keyset pages that together are every row once, ties included`, async (t) => {
    const h = backends[kind].handle!;
    const siteId = randomUUID();
    const ts = now - 5000;
    // 23 events, many on the very same millisecond, so pages split inside a run of equal timestamps.
    const evs = Array.from({ length: 23 }, (_, i) =>
      i % 2 === 0 ? event({ type: 'page_view', name: undefined, ts: ts + (i % 3) }) : signal({ ts: ts + (i % 3) }),
    );
    await h.bulk((tx) => storeEvents(tx, [batch(siteId, evs)]));
    const pages: number[] = [];
    const seen: string[] = [];
    for await (const rows of loadWindowEvents(h.db, siteId, 'production', now - 60_000, 5)) {
      pages.push(rows.length);
      seen.push(...rows.map((r) => r.id));
    }
    t.deepEqual(pages, [5, 5, 5, 5, 3]);
    t.deepEqual([...seen].sort(), evs.map((e) => e.id).sort());
    const signalIds: string[] = [];
    for await (const rows of loadSignalEvents(h.db, siteId, 'production', now - 60_000, 4))
      signalIds.push(...rows.map((r) => r.id));
    t.deepEqual(
      signalIds.sort(),
      evs
        .filter((e) => e.type === 'signal')
        .map((e) => e.id)
        .sort(),
    );
  });
}
