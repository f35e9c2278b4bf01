import test from 'ava';
import { randomUUID } from 'node:crypto';
import { sql, type KyselyPlugin } from 'kysely';
import { openDatabase, type DatabaseHandle } from '../../shared/db/connection.ts';
import { createTestDatabase } from '../../shared/testing/database.ts';
import { createLogger } from '../../shared/logger.ts';
import { seedAlertScale } from '../../ops/testing/alert-scale.ts';
import { AlertEvaluator } from './alert-evaluator.ts';

let handle: DatabaseHandle;
let drop: () => Promise<void>;
test.before(async () => {
  const d = await createTestDatabase('alerteval');
  drop = d.drop;
  handle = await openDatabase({ url: d.url, dataDir: '' });
});
test.after.always(async () => {
  await handle?.close();
  await drop?.();
});

const HOUR = 3600_000;
const log = createLogger('silent');

async function newSite(): Promise<string> {
  const orgId = randomUUID();
  const siteId = randomUUID();
  await handle.db.insertInto('orgs').values({ id: orgId, name: 'o' }).execute();
  await handle.db.insertInto('sites').values({ id: siteId, org_id: orgId, name: 's', url: 'https://s.test' }).execute();
  return siteId;
}

/** Counts the statements sent through the Kysely instance it is plugged into. */
function statementCounter(): KyselyPlugin & { n: number } {
  return {
    n: 0,
    transformQuery(args) {
      this.n++;
      return args.node;
    },
    async transformResult(args) {
      return args.result;
    },
  };
}

test('the alert tick sends the same number of statements for 30 pages as for 300 (set-based, not per rule and page)', async (t) => {
  const now = Date.now();
  const counts: number[] = [];
  for (const pages of [30, 300]) {
    const siteId = await newSite();
    // co_occurrence at 0 holds on every page (its first evaluation only counts: it needs two), the rest stay quiet.
    await seedAlertScale(handle.db, { siteId, pages, hours: 48, now, thresholds: { co_occurrence: 0 } });
    const counter = statementCounter();
    const evaluator = new AlertEvaluator({ log });
    t.is(await evaluator.tick(handle.db.withPlugin(counter), [siteId], now), 0, 'quiet pages fire nothing');
    counts.push(counter.n);
    const states = await handle.db
      .selectFrom('alert_rule_states')
      .innerJoin('alert_rules', 'alert_rules.id', 'alert_rule_states.rule_id')
      .select(['alert_rules.trigger_type', 'recent'])
      .where('alert_rules.site_id', '=', siteId)
      .execute();
    t.is(states.length, pages, 'every page was evaluated; quiet pairs are not stored');
    t.true(states.every((s) => s.trigger_type === 'co_occurrence' && s.recent === '01'));
  }
  t.is(counts[0], counts[1], `statements: ${counts.join(' vs ')}`);
});

test('the anomaly baseline is the same hour of past weeks: a page that leaves its band fires, once, on the second tick', async (t) => {
  const siteId = await newSite();
  const now = Math.floor(Date.now() / HOUR) * HOUR + 30 * 60_000;
  // 9 weeks of steady hours (score 20-29 by page), anomaly's band half-width at least 10 points.
  await seedAlertScale(handle.db, { siteId, pages: 5, hours: 9 * 168, now, thresholds: { anomaly: 10 } });
  // The current hour of /scale-3 jumps to 90; its same hour of past weeks says 23.
  await sql`update page_scores set score = 90 where site_id = ${siteId} and page = '/scale-3'
            and window_start = ${new Date(Math.floor(now / HOUR) * HOUR)}`.execute(handle.db);
  const evaluator = new AlertEvaluator({ log });
  await evaluator.tick(handle.db, [siteId], now);
  await evaluator.tick(handle.db, [siteId], now + 5 * 60_000);
  await evaluator.tick(handle.db, [siteId], now + 10 * 60_000);
  const alerts = await handle.db
    .selectFrom('alerts')
    .select(['page', 'trigger_type', 'details'])
    .where('site_id', '=', siteId)
    .where('trigger_type', '=', 'anomaly')
    .execute();
  t.deepEqual(
    alerts.map((a) => a.page),
    ['/scale-3'],
  );
  t.regex(String(alerts[0].details.summary), /band|baseline|median/i);
});

test('a quiet pair is never stored, and still fires when its condition comes; a pair that turns quiet again loses its row', async (t) => {
  const siteId = await newSite();
  const now = Math.floor(Date.now() / HOUR) * HOUR + 60_000;
  await seedAlertScale(handle.db, { siteId, pages: 3, hours: 48, now });
  const evaluator = new AlertEvaluator({ log });
  const states = () =>
    handle.db
      .selectFrom('alert_rule_states')
      .innerJoin('alert_rules', 'alert_rules.id', 'alert_rule_states.rule_id')
      .select(['alert_rules.trigger_type', 'alert_rule_states.page', 'recent', 'alert_rule_states.updated_at'])
      .where('alert_rules.site_id', '=', siteId)
      .execute();
  // 21 quiet ticks, the first included: no pair is stored (no row reads as quiet), nothing is written.
  for (let i = 0; i < 21; i++) t.is(await evaluator.tick(handle.db, [siteId], now + i * 60_000), 0);
  t.deepEqual(await states(), []);
  // /scale-1 reaches 99: its budget (95) and new page (95: first seen 2 days ago) rules fire at once, as they would
  // from any clear state; the first held result counts as a change from clear.
  await sql`update page_scores set score = 99 where site_id = ${siteId} and page = '/scale-1'
            and window_start = ${new Date(Math.floor(now / HOUR) * HOUR)}`.execute(handle.db);
  t.is(await evaluator.tick(handle.db, [siteId], now + 22 * 60_000), 2);
  const alerts = await handle.db
    .selectFrom('alerts')
    .select(['page', 'trigger_type'])
    .where('site_id', '=', siteId)
    .orderBy('trigger_type')
    .execute();
  t.deepEqual(alerts, [
    { page: '/scale-1', trigger_type: 'budget' },
    { page: '/scale-1', trigger_type: 'new_page' },
  ]);
  // /scale-1's spike (21 → 99 against the hour before) and anomaly (out of its rolling 24 h band) rules hold too, and
  // wait for a second evaluation; no other pair is stored.
  t.deepEqual(
    (await states()).map((s) => `${s.page} ${s.trigger_type} ${s.recent}`).sort(),
    ['anomaly', 'budget', 'new_page', 'spike'].map((trigger) => `/scale-1 ${trigger} 01`),
  );
  // The score falls back: both alerts resolve after 15 clear minutes, and once a pair's flap window holds clear results
  // alone (20 ticks) its row goes.
  await sql`update page_scores set score = 21 where site_id = ${siteId} and page = '/scale-1'
            and window_start = ${new Date(Math.floor(now / HOUR) * HOUR)}`.execute(handle.db);
  let decided = 0;
  for (let i = 23; i <= 42; i++) {
    decided += await evaluator.tick(handle.db, [siteId], now + i * 60_000);
    if (i === 41) t.is((await states()).length, 4, 'kept while a held result is in the flap window');
  }
  t.is(decided, 2, 'two resolves');
  t.deepEqual(await states(), []);
});
