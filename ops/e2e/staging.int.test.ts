import test from 'ava';
import { newReader, useStack } from '../testing/stack.ts';
import { eventually } from '../../shared/testing/eventually.ts';
import { getJson, postJson } from '../../shared/testing/http-client.ts';
import { sendSessions, spread, allEventsStored, backdateDeploy } from '../testing/session-traffic.ts';
import { recomputeSiteCommand } from '../../processor/recompute-site.ts';
import { createLogger } from '../../shared/logger.ts';
import { FrictionEngineSink } from '../../processor/engine-sink.ts';
import { insertAlertRow } from '../testing/alert-row.ts';

/**
 * Staging as a full environment (issue 14, item 2): staging traffic is folded into its own scores, issues and
 * elements, a staging deploy verifies staging's issues on staging traffic, and the read routes take `environment`.
 */
const stack = useStack(test);

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
const PAY = { signal: 'rage_click', selector: '#pay', label: 'Pay now' };

test.serial(
  "a staging deploy verifies a staging issue on staging traffic; production's issue on the same element stays open; recomputation matches per environment",
  async (t) => {
    const { tenant, auth, read } = await newReader(stack);
    const db = stack.infra.database.db;
    const send =
      (sessions: Parameters<typeof spread>[3]) => (n: number, from: number, to: number, environment?: string) =>
        sendSessions(
          stack.baseUrl,
          tenant.publishableKey,
          spread(n, from, to, (i) => ({ ...sessions(i), ...(environment ? { environment } : {}) })),
        );
    const payEveryFourth = send((i) => ({ signals: i % 4 === 0 ? [PAY] : [] }));
    const calm = send(() => ({}));
    const N = Date.now();
    let sent = 0;

    // Both environments: the Pay button rage-clicks in a quarter of the sessions, a week and more before.
    sent += await payEveryFourth(120, N - 6 * DAY, N - 5 * DAY, 'staging');
    sent += await payEveryFourth(120, N - 6 * DAY, N - 5 * DAY);
    sent += await payEveryFourth(200, N - 4 * DAY, N - 50 * HOUR - 10 * MIN, 'staging');
    await allEventsStored(db, tenant.siteId, sent);
    const issueOf = async (environment: string) =>
      eventually(
        async () => {
          const r = await read(`/v1/query/issues?site_id=${tenant.siteId}&environment=${environment}`);
          return r.body.data.issues.find((i: { selector: string }) => i.selector === '#pay');
        },
        { timeoutMs: 30_000 },
      );
    const stagingPay = await issueOf('staging');
    const productionPay = await issueOf('production');
    t.not(stagingPay.id, productionPay.id, 'one issue per environment for the same element');
    t.is(stagingPay.affected_sessions, 80);
    t.is(productionPay.affected_sessions, 30);
    // An issue is read in its own environment; in another it is not found, like another site's.
    t.is((await read(`/v1/query/issues/${stagingPay.id}?site_id=${tenant.siteId}&environment=staging`)).status, 200);
    t.is((await read(`/v1/query/issues/${stagingPay.id}?site_id=${tenant.siteId}`)).status, 404);

    // A staging deploy (the fix), then a day of staging traffic without Pay signals; production keeps rage-clicking.
    const rec = await postJson(`${stack.baseUrl}/v1/deploys`, { version: '1.1.0-rc1', environment: 'staging' }, auth);
    t.is(rec.status, 201);
    const deployId = rec.body.data.id;
    await backdateDeploy(db, deployId, N - 50 * HOUR);
    sent += await calm(250, N - 50 * HOUR + 6 * MIN, N - 25 * HOUR - 5 * MIN, 'staging');
    sent += await payEveryFourth(250, N - 50 * HOUR + 6 * MIN, N - 25 * HOUR - 5 * MIN);
    await allEventsStored(db, tenant.siteId, sent, 120_000);
    await stack.tick();

    const staged = (await read(`/v1/query/issues/${stagingPay.id}?site_id=${tenant.siteId}&environment=staging`)).body
      .data;
    t.is(staged.status, 'verified');
    t.like(
      staged.verifications.find((v: { deploy_id: string }) => v.deploy_id === deployId),
      { deploy_version: '1.1.0-rc1', result: 'verified', look: '24h', signal_count_after: 0 },
    );
    const prod = (await read(`/v1/query/issues/${productionPay.id}?site_id=${tenant.siteId}`)).body.data;
    t.is(prod.status, 'open');
    t.deepEqual(prod.verifications, [], 'a staging deploy tests no production issue');
    const deploy = (await read(`/v1/query/deploys/${deployId}?site_id=${tenant.siteId}`)).body.data;
    t.deepEqual(
      deploy.related_issues.map((r: { issue_id: string; relation: string }) => [r.issue_id, r.relation]),
      [[stagingPay.id, 'verified']],
    );
    t.is(deploy.verdict, 'PASS', deploy.verdict_reasons.join('; '));

    // Scores, elements and heatmaps of each environment are its own.
    // (The traffic so far is older than the 24 h score window: fresh visits give each environment a current score.)
    sent += await sendSessions(
      stack.baseUrl,
      tenant.publishableKey,
      spread(20, Date.now() - 10 * MIN, Date.now(), () => ({ page: '/beta', environment: 'staging' })),
    );
    sent += await payEveryFourth(20, Date.now() - 10 * MIN, Date.now());
    await allEventsStored(db, tenant.siteId, sent);
    const scores = async (environment: string) =>
      (await read(`/v1/query/scores?site_id=${tenant.siteId}&environment=${environment}`)).body.data;
    t.deepEqual(
      (await scores('staging')).pages.map((p: { page: string }) => p.page),
      ['/beta'],
    );
    t.deepEqual(
      (await scores('production')).pages.map((p: { page: string }) => p.page),
      ['/checkout'],
    );
    t.true(
      (await scores('production')).overall_score > (await scores('staging')).overall_score,
      "production rage-clicks, staging's /beta is calm",
    );
    const elements = async (environment: string) =>
      (await read(`/v1/query/elements?site_id=${tenant.siteId}&environment=${environment}`)).body.data.elements[0];
    t.is((await elements('staging')).affected_users, 80);
    t.is((await elements('production')).affected_users, 30 + 63 + 5);
    const heat = async (environment: string) =>
      await read(
        `/v1/query/element-heatmap?site_id=${tenant.siteId}&page=/checkout&selector=%23pay&environment=${environment}`,
      );
    const [stagingHeat, productionHeat] = [await heat('staging'), await heat('production')];
    t.is(stagingHeat.status, 200);
    t.notDeepEqual(stagingHeat.body.data, productionHeat.body.data);

    // A restart rebuilds each environment's windows from its own rows (one read of the site's window for both).
    const rebuilt = new FrictionEngineSink({ log: createLogger('silent') });
    await rebuilt.rebuild(db, [tenant.siteId]);
    const sessionsOf = (environment: 'production' | 'staging', page: string) =>
      rebuilt.engines[environment].scores.pageSessions(tenant.siteId, page, Date.now());
    t.deepEqual(
      [
        sessionsOf('staging', '/beta'),
        sessionsOf('staging', '/checkout'),
        sessionsOf('production', '/checkout'),
        sessionsOf('production', '/beta'),
      ],
      [20, 0, 20, 0],
    );

    // Exactness per environment: what the incremental engine stored is what a recomputation from the raw rows gives
    // (after a tick, which rescores every page with the current site mean; a batch uses one up to a minute old).
    await stack.tick();
    for (const environment of ['production', 'staging'] as const) {
      const report = await recomputeSiteCommand(
        db,
        tenant.siteId,
        Date.now(),
        false,
        createLogger('silent'),
        environment,
      );
      t.true(report.pages.checked > 0, environment);
      t.deepEqual(
        [report.pages.differing, report.issues.differing, report.elements.differing],
        [[], [], []],
        environment,
      );
    }
  },
);

test("environment is production or staging on every read route (400 naming it otherwise); alerts are production's only", async (t) => {
  const tenant = await stack.newTenant();
  const auth = { authorization: `Bearer ${tenant.secretKey}` };
  const q = `site_id=${tenant.siteId}`;
  const routes = [
    `/v1/query/scores?${q}`,
    `/v1/scores?${q}`,
    `/v1/query/page?${q}&page=/x`,
    `/v1/query/trends?${q}`,
    `/v1/query/compare?${q}&a=/x&b=/y`,
    `/v1/query/issues?${q}`,
    `/v1/issues?${q}`,
    `/v1/query/issues/00000000-0000-0000-0000-000000000000?${q}`,
    `/v1/query/elements?${q}`,
    `/v1/query/element-heatmap?${q}&page=/x&selector=%23a`,
    `/v1/query/page-heatmap?${q}&page=/x`,
    `/v1/query/raw?${q}&table=events`,
    `/v1/query/alerts?${q}`,
  ];
  for (const r of routes) {
    const bad = await getJson(`${stack.baseUrl}${r}&environment=qa`, auth);
    t.is(bad.status, 400, r);
    t.is(bad.body.error.details[0].path, 'environment', r);
    t.not((await getJson(`${stack.baseUrl}${r}&environment=production`, auth)).status, 400, r);
  }
  // Alert rules watch production only: a production alert is listed for production and never for staging.
  await insertAlertRow(stack.infra.database.db, tenant.siteId, {
    rule_name: 'budget',
    page: '/x',
    trigger_type: 'budget',
    score_before: 0,
    score_after: 50,
    status: 'fired',
  });
  for (const [r, list] of [
    [`/v1/query/alerts?${q}`, 'alerts'],
    [`/v1/alerts?${q}`, 'alerts'],
    [`/v1/query/raw?${q}&table=alerts`, 'rows'],
  ] as const) {
    const production = await getJson(`${stack.baseUrl}${r}`, auth);
    t.is(production.body.data[list].length, 1, r);
    const staging = await getJson(`${stack.baseUrl}${r}&environment=staging`, auth);
    t.is(staging.status, 200, r);
    t.deepEqual(staging.body.data[list], [], r);
  }
  t.is((await getJson(`${stack.baseUrl}/v1/query/scores?${q}&environment=staging`, auth)).body.data.overall_score, 0);
});
