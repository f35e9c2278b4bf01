import test from 'ava';
import { sql, type Kysely } from 'kysely';
import { openDatabase, type DatabaseHandle } from '../shared/db/connection.ts';
import type { Database } from '../shared/db/database.ts';
import { createLogger } from '../shared/logger.ts';
import { createTestDatabase } from '../shared/testing/database.ts';
import { openEmbeddedTestDatabase } from '../shared/testing/embedded-template.ts';
import { insertOrg, provisionSite } from '../shared/tenancy/provision.ts';
import { writeDemoData } from './demo-data.ts';
import { deriveSite } from '../processor/derive-site.ts';
import { recomputeSiteCommand } from '../processor/recompute-site.ts';

// The set-based derivation writes exactly what the processor's recompute (`friction recompute --write`) writes from
// the same raw rows: page scores, today's history row, issues with their evidence and history, elements, the
// issue.created messages. On demo data plus rows the generator never writes: selector variants that one canonical
// selector joins, labels with spaces round them, equal times with different selectors, signals without a selector.

const log = createLogger('silent');
const NOW = Date.UTC(2026, 10, 20, 14, 30);
const HOUR = 3_600_000;

const backends: Record<string, { handle?: DatabaseHandle; url?: string; drop?: () => Promise<void> }> = {
  postgres: {},
  pglite: {},
};
test.before(async () => {
  const scratch = await createTestDatabase('derive_site');
  backends.postgres = {
    handle: await openDatabase({ url: scratch.url, dataDir: '' }),
    url: scratch.url,
    drop: scratch.drop,
  };
  backends.pglite = { handle: await openEmbeddedTestDatabase() };
});
test.after.always(async () => {
  for (const b of Object.values(backends)) {
    await b.handle?.close();
    await b.drop?.();
  }
});

/** Signal events (and their `signals` mirror) the generator never writes. */
async function addOddSignals(db: Kysely<Database>, siteId: string): Promise<void> {
  const rows: {
    session: string;
    ts: number;
    page: string;
    type: string;
    selector: string | null;
    label: string | null;
  }[] = [];
  for (let s = 0; s < 6; s++) {
    const session = `odd-${s}`;
    const at = NOW - (s + 1) * 5 * HOUR;
    rows.push(
      {
        session,
        ts: at,
        page: '/odd',
        type: 'dead_click',
        selector: `ul > li:nth-child(${s + 1}) > button`,
        label: ' Add  ',
      },
      {
        session,
        ts: at,
        page: '/odd',
        type: 'dead_click',
        selector: `ul>li:nth-child(${s + 2})>button`,
        label: 'Add to cart',
      },
      { session, ts: at + 1000, page: '/odd', type: 'rage_click', selector: 'div.css-1x2y3z > a', label: '\u00a0Go\t' },
      { session, ts: at + 2000, page: '/odd', type: 'rage_click', selector: 'div > a', label: null },
      { session, ts: at + 3000, page: '/odd', type: 'form_abandon', selector: null, label: null },
      { session, ts: at + 4000, page: '/odd', type: 'dead_click', selector: '   ', label: '  ' },
    );
  }
  let i = 0;
  for (const r of rows) {
    const id = `00000000-0000-7000-8000-${String(++i).padStart(12, '0')}`;
    const ts = new Date(r.ts);
    await db
      .insertInto('events')
      .values({
        site_id: siteId,
        id,
        ts,
        received_at: ts,
        session_id: r.session,
        type: 'signal',
        page: r.page,
        signal: r.type,
        selector: r.selector,
        label: r.label,
        device: 'desktop',
      } as never)
      .execute();
    await db
      .insertInto('signals')
      .values({
        site_id: siteId,
        event_id: id,
        ts,
        session_id: r.session,
        page: r.page,
        signal_type: r.type,
        selector: r.selector,
        label: r.label,
        device: 'desktop',
        environment: 'production',
      } as never)
      .execute();
  }
}

async function clearDerived(db: Kysely<Database>, siteId: string): Promise<void> {
  await sql`delete from ux_issues where site_id = ${siteId}`.execute(db);
  await sql`delete from page_elements where site_id = ${siteId}`.execute(db);
  await sql`delete from page_scores where site_id = ${siteId}`.execute(db);
  await sql`delete from score_history where site_id = ${siteId} and day = ${new Date(NOW).toISOString().slice(0, 10)}::date`.execute(
    db,
  );
  await sql`delete from outbox`.execute(db);
}

/** The derived rows, without ids and write times. */
async function derived(db: Kysely<Database>, siteId: string) {
  const q = async (query: ReturnType<typeof sql>) => (await query.execute(db)).rows;
  return {
    scores:
      await q(sql`select environment, page, window_start, score, friction, sessions, page_views, signal_count, dominant_signal, trend
                        from page_scores where site_id = ${siteId} order by environment, page collate "C"`),
    history:
      await q(sql`select environment, page, day, score, sessions, page_views, signal_count, dominant_signal from score_history
                         where site_id = ${siteId} and day = ${new Date(NOW).toISOString().slice(0, 10)}::date order by environment, page collate "C"`),
    issues:
      await q(sql`select environment, page, cluster_selector, selector, signal_type, label, title, hypothesis, signal_count,
                               affected_sessions, severity, status, first_signal_at, last_signal_at, evidence,
                               (select array_agg(u.kind || ' ' || u.changes::text) from issue_updates u where u.issue_id = i.id) as updates
                        from ux_issues i where site_id = ${siteId}
                        order by environment, page collate "C", cluster_selector collate "C", signal_type collate "C"`),
    elements:
      await q(sql`select environment, page, cluster_selector, selector, label, signals, signal_count, friction_score, dominant_signal,
                                 affected_users, recommendation, last_signal_at
                          from page_elements where site_id = ${siteId} order by environment, page collate "C", cluster_selector collate "C"`),
    messages: await q(sql`select subject_kind, (payload->'issue') - 'id' as issue from outbox
                          order by payload->'issue'->>'environment', payload->'issue'->>'page' collate "C",
                                   payload->'issue'->>'element_selector' collate "C", payload->'issue'->>'signal_type' collate "C"`),
  };
}

for (const name of Object.keys(backends)) {
  test.serial(`${name}: the set-based derivation writes what the processor's recompute writes`, async (t) => {
    const { handle, url } = backends[name];
    const db = handle!.db;
    const orgId = await insertOrg(db, { name: 'derive' });
    const { siteId } = await provisionSite(db, { orgId, name: 'derive', url: 'https://shop.example' });
    await writeDemoData(
      handle!,
      url,
      { events: name === 'postgres' ? 8000 : 3000, siteId, days: 8, pages: 40, seed: 5, now: NOW },
      log,
    );
    await addOddSignals(db, siteId);

    await clearDerived(db, siteId);
    for (const environment of ['production', 'staging'] as const) await deriveSite(db, siteId, NOW, environment);
    const setBased = await derived(db, siteId);

    await clearDerived(db, siteId);
    for (const environment of ['production', 'staging'] as const)
      await recomputeSiteCommand(db, siteId, NOW, true, log, environment);
    const processor = await derived(db, siteId);

    t.deepEqual(setBased, processor);
    t.true(processor.scores.length > 10 && processor.issues.length > 5 && processor.elements.length > 10);
    const odd = processor.issues
      .filter((i) => (i as { page: string }).page === '/odd')
      .map((i) => (i as { cluster_selector: string }).cluster_selector);
    t.deepEqual(
      [...new Set(odd)].sort(),
      ['', 'div > a', 'ul > li:nth-child(n) > button'],
      'variants joined by their canonical selector',
    );
  });
}
