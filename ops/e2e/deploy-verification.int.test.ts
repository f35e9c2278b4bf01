import test from 'ava';
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { bearer, newReader, type TestTenant, useStack } from '../testing/stack.ts';
import { eventually } from '../../shared/testing/eventually.ts';
import { getJson, postJson } from '../../shared/testing/http-client.ts';
import {
  allEventsStored,
  backdateDeploy as backdateTo,
  sendSessions,
  spread,
  type SessionSpec,
} from '../testing/session-traffic.ts';
import { runFriction } from '../../shared/testing/processes.ts';

const stack = useStack(test);

const MIN = 60_000;
const HOUR = 60 * MIN;
const DAY = 24 * HOUR;
const send = (key: string, sessions: readonly SessionSpec[]) => sendSessions(stack.baseUrl, key, sessions);

const PAY = { signal: 'rage_click', selector: '#pay', label: 'Pay now' };
const COUPON = { signal: 'dead_click', selector: '#coupon', label: 'Apply coupon' };
const NEWS = { signal: 'dead_click', selector: '#newsletter', label: 'Subscribe' };

const allStored = (siteId: string, sent: number, timeoutMs?: number) =>
  allEventsStored(stack.infra.database.db, siteId, sent, timeoutMs);

// The test plays days of traffic in seconds: it moves a deploy's recording, or an issue's resolution, into the past.
const backdateDeploy = (id: string, at: number) => backdateTo(stack.infra.database.db, id, at);
const backdateResolution = (id: string, at: number) =>
  stack.infra.database.db
    .updateTable('ux_issues')
    .set({ resolved_at: new Date(at) })
    .where('id', '=', id)
    .execute();
const resolveIssue = (tenant: TestTenant, id: string) =>
  postJson(
    `${stack.baseUrl}/v1/issues/${id}`,
    { status: 'resolved' },
    { authorization: `Bearer ${tenant.owner.token}` },
  );

/**
 * The week before the deploys: `n` sessions spread over the day six days before `N`, the i-th with `signals(i)`.
 * Waits until they are stored and the site has two issues; returns how many events were sent and the Pay and Coupon
 * issues.
 */
async function weekBefore(tenant: TestTenant, N: number, n: number, signals: (i: number) => (typeof PAY)[]) {
  const sent = await send(
    tenant.publishableKey,
    spread(n, N - 6 * DAY, N - 5 * DAY, (i) => ({ signals: signals(i) })),
  );
  await allStored(tenant.siteId, sent);
  const issues = await eventually(
    async () => {
      const r = (await getJson(`${stack.baseUrl}/v1/query/issues?site_id=${tenant.siteId}`, bearer(tenant))).body.data;
      return r.total >= 2 ? (r.issues as { id: string; selector: string }[]) : undefined;
    },
    { timeoutMs: 30_000 },
  );
  const bySelector = (selector: string) => issues.find((i) => i.selector === selector)!;
  return { sent, pay: bySelector('#pay'), coupon: bySelector('#coupon') };
}

/** Runs `friction deploy check` as a process against the stack; resolves to its exit code and output. */
const cliCheck = (args: string[], env: Record<string, string>) =>
  runFriction(['deploy', 'check', ...args], env, { clean: false });

test.serial(
  'a fixing deploy verifies its issue, a later deploy that brings a resolved issue back regresses it, staging leaves production alone, and the CI gate exits 0 / 1',
  async (t) => {
    const { tenant, auth, read } = await newReader(stack);
    const db = stack.infra.database.db;
    const N = Date.now();

    // Week before: the Pay button rage-clicks in a quarter of the sessions, the coupon button is dead in some.
    const week = await weekBefore(tenant, N, 120, (i) => [
      ...(i % 4 === 0 ? [PAY] : []),
      ...(i % 5 === 0 ? [COUPON] : []),
    ]);
    let sent = week.sent;
    const { pay, coupon } = week;
    t.truthy(pay && coupon);

    // The coupon issue was fixed and resolved four days ago (the test moves its resolution into the past).
    t.is((await resolveIssue(tenant, coupon.id)).status, 200);
    await backdateResolution(coupon.id, N - 4 * DAY);

    // Quiet period for the coupon; Pay still broken.
    sent += await send(
      tenant.publishableKey,
      spread(200, N - 4 * DAY, N - 50 * HOUR - 10 * MIN, (i) => ({ signals: i % 4 === 0 ? [PAY] : [] })),
    );

    // Deploy 1 (the Pay fix): 201, before set, after null.
    const rec1 = await postJson(`${stack.baseUrl}/v1/deploys`, { version: '1.1.0', commit_sha: 'a1b2c3d' }, auth);
    t.is(rec1.status, 201);
    t.is(typeof rec1.body.data.confusion_before, 'number');
    t.is(rec1.body.data.confusion_after, null);
    t.is(rec1.body.data.delta, null);
    const d1 = rec1.body.data.id;
    await backdateDeploy(d1, N - 50 * HOUR);
    // After deploy 1, for a day (decisions wait for a full day of evidence): no Pay signals at all.
    sent += await send(
      tenant.publishableKey,
      spread(250, N - 50 * HOUR + 6 * MIN, N - 25 * HOUR - 5 * MIN, () => ({})),
    );

    // Deploy 2 (2.0.0): the coupon comes back in the sessions on the new version; a new element breaks too.
    const rec2 = await postJson(`${stack.baseUrl}/v1/deploys`, { version: '2.0.0' }, auth);
    t.is(rec2.status, 201);
    const d2 = rec2.body.data.id;
    await backdateDeploy(d2, N - 25 * HOUR);
    sent += await send(
      tenant.publishableKey,
      spread(250, N - 25 * HOUR + 2 * MIN, N - 20 * MIN, (i) => ({
        appVersion: '2.0.0',
        signals: [...(i % 6 === 0 ? [COUPON] : []), ...(i % 40 === 0 ? [NEWS] : [])],
      })),
    );
    // Sessions still on the old release after deploy 2: not evidence for it (release-aware cohort).
    sent += await send(
      tenant.publishableKey,
      spread(30, N - 25 * HOUR + 2 * MIN, N - 20 * MIN, () => ({ appVersion: '1.1.0', signals: [COUPON] })),
    );
    await allStored(tenant.siteId, sent, 120_000);

    await stack.tick();

    // Deploy 1 verified the Pay issue, with a record.
    const payNow = (await read(`/v1/query/issues/${pay.id}?site_id=${tenant.siteId}`)).body.data;
    t.is(payNow.status, 'verified');
    t.truthy(payNow.resolved_at);
    const v = payNow.verifications.find((r: { deploy_id: string }) => r.deploy_id === d1);
    t.like(v, { deploy_version: '1.1.0', result: 'verified', look: '24h', signal_count_after: 0 });
    t.true(v.signal_count_before > 0 && v.sessions_before >= 200 && v.sessions_after >= 200 && v.p_value < v.alpha);
    t.truthy(v.verified_at);
    const updated = await db
      .selectFrom('outbox')
      .select(['subject_kind', 'payload'])
      .where('msg_id', 'like', `issue.updated:${pay.id}:deploy:%`)
      .execute();
    t.is(updated.length, 1);
    t.like(updated[0].payload as object, { changes: { status: 'verified' } });

    // Deploy 2 regressed the coupon issue, with a record; the new element's issue is linked to it.
    const couponNow = (await read(`/v1/query/issues/${coupon.id}?site_id=${tenant.siteId}`)).body.data;
    t.is(couponNow.status, 'regressed');
    t.like(
      couponNow.verifications.find((r: { deploy_id: string }) => r.deploy_id === d2),
      { deploy_version: '2.0.0', result: 'regressed', signal_count_before: 0 },
    );
    t.like(
      couponNow.verifications.find((r: { deploy_id: string }) => r.deploy_id === d1),
      { result: 'not_regressed' },
    );
    const news = await eventually(async () =>
      (await read(`/v1/query/issues?site_id=${tenant.siteId}`)).body.data.issues.find(
        (i: { selector: string }) => i.selector === '#newsletter',
      ),
    );
    t.is((await read(`/v1/query/issues/${news.id}?site_id=${tenant.siteId}`)).body.data.introduced_by_deploy, d2);

    const dep1 = (await read(`/v1/query/deploys/${d1}?site_id=${tenant.siteId}`)).body.data;
    t.is(typeof dep1.confusion_after, 'number');
    t.is(dep1.delta, Math.round((dep1.confusion_after - dep1.confusion_before) * 10) / 10);
    t.is(dep1.frozen, true, 'frozen by the next deploy');
    t.like(dep1.cohort, { kind: 'time_window' });
    t.is(dep1.verdict, 'PASS', dep1.verdict_reasons.join('; '));
    t.true(
      dep1.related_issues.some(
        (r: { issue_id: string; relation: string }) => r.issue_id === pay.id && r.relation === 'verified',
      ),
    );
    const dep2 = (await read(`/v1/query/deploys/${d2}?site_id=${tenant.siteId}`)).body.data;
    // Only sessions on 2.0.0, and only the first 24 h: confusion_after froze a day after the deploy.
    t.like(dep2.cohort, { kind: 'version' });
    t.true(dep2.cohort.sessions > 200 && dep2.cohort.sessions < 250, String(dep2.cohort.sessions));
    t.true(dep2.frozen);
    t.true(Date.parse(dep2.cohort.to) <= N - HOUR);
    t.is(dep2.verdict, 'FAIL');
    t.true(
      dep2.related_issues.some(
        (r: { issue_id: string; relation: string }) => r.issue_id === coupon.id && r.relation === 'regressed',
      ),
    );
    t.true(
      dep2.related_issues.some(
        (r: { issue_id: string; relation: string }) => r.issue_id === news.id && r.relation === 'introduced',
      ),
    );
    // A second tick takes no look twice.
    await stack.tick();
    const records = await db
      .selectFrom('deploy_verifications')
      .select(['deploy_id', 'look'])
      .where('site_id', '=', tenant.siteId)
      .execute();
    t.is(records.filter((r) => r.deploy_id === d1 && r.look === '24h').length, 2, 'one per tested issue');

    // The CI gate: exit 1 on the regressing deploy, 0 on the fixing one, 2 on a wrong id.
    const env = {
      FRICTION_BASE_URL: stack.baseUrl,
      FRICTION_SECRET_KEY: tenant.secretKey,
      FRICTION_SITE_ID: tenant.siteId,
    };
    const bad = await cliCheck(['--deploy', d2, '--timeout', '5s'], env);
    t.is(bad.code, 1, bad.stdout + bad.stderr);
    t.regex(bad.stdout, /^FAIL/);
    t.regex(bad.stdout, /regressed/);
    const good = await cliCheck(['--version', '1.1.0', '--timeout', '5s'], env);
    t.is(good.code, 0, good.stdout + good.stderr);
    t.regex(good.stdout, /^PASS/);
    t.is((await cliCheck(['--deploy', randomUUID(), '--timeout', '1s'], env)).code, 2);
    t.is((await cliCheck(['--timeout', '1s'], env)).code, 2);

    // Staging: a deploy measured on staging traffic; production scores, issues, elements and signals do not move (the
    // production reads answer byte for byte what they answered before), and staging gets its own.
    const productionReads = async () =>
      Promise.all(
        ['scores', 'issues', 'elements', 'page?page=/checkout&'].map(async (r) => {
          const path = r.includes('?')
            ? `/v1/query/${r}site_id=${tenant.siteId}`
            : `/v1/query/${r}?site_id=${tenant.siteId}`;
          // The tick rescores every page with the same result and stamps it: when it ran is no part of the comparison.
          const { updated_at: _stamped, ...data } = (await read(path)).body.data;
          return JSON.stringify(data);
        }),
      );
    const readsBefore = await productionReads();
    const issuesBefore = await db
      .selectFrom('ux_issues')
      .select(['id', 'status', 'signal_count', 'affected_sessions'])
      .where('site_id', '=', tenant.siteId)
      .orderBy('id')
      .execute();
    const signalsBefore = await sql<{
      n: number;
    }>`select count(*)::int as n from signals where site_id = ${tenant.siteId} and environment = 'production'`.execute(
      db,
    );
    const st = await postJson(`${stack.baseUrl}/v1/deploys`, { version: '2.1.0-rc1', environment: 'staging' }, auth);
    t.is(st.status, 201);
    t.is(st.body.data.confusion_before, 0, 'no staging traffic yet: no staging friction');
    await backdateDeploy(st.body.data.id, N - 1 * HOUR);
    sent += await send(
      tenant.publishableKey,
      spread(40, N - 50 * MIN, N - 30 * MIN, () => ({
        environment: 'staging',
        signals: [PAY, PAY, { signal: 'rage_click', selector: '#staging-only', label: 'Beta' }],
      })),
    );
    await allStored(tenant.siteId, sent);
    await stack.tick();
    t.deepEqual(await productionReads(), readsBefore);
    const production = await db
      .selectFrom('ux_issues')
      .select(['id', 'status', 'signal_count', 'affected_sessions'])
      .where('site_id', '=', tenant.siteId)
      .where('environment', '=', 'production')
      .orderBy('id')
      .execute();
    t.deepEqual(production, issuesBefore);
    t.is(
      (
        await sql<{
          n: number;
        }>`select count(*)::int as n from signals where site_id = ${tenant.siteId} and environment = 'production'`.execute(
          db,
        )
      ).rows[0].n,
      signalsBefore.rows[0].n,
    );
    const stagingIssues = (await read(`/v1/query/issues?site_id=${tenant.siteId}&environment=staging`)).body.data
      .issues;
    t.deepEqual(stagingIssues.map((i: { selector: string }) => i.selector).sort(), ['#pay', '#staging-only']);
    t.false(
      stagingIssues.some((i: { id: string }) => issuesBefore.some((p) => p.id === i.id)),
      'staging issues are their own rows',
    );
    t.true((await read(`/v1/query/scores?site_id=${tenant.siteId}&environment=staging`)).body.data.overall_score > 0);
    const stDeploy = (await read(`/v1/query/deploys/${st.body.data.id}?site_id=${tenant.siteId}`)).body.data;
    t.is(stDeploy.environment, 'staging');
    t.true(stDeploy.confusion_after > 0, 'measured on staging traffic');
    // First seen after the staging deploy: introduced by it; no production issue is related to it.
    t.deepEqual(
      stDeploy.related_issues.map((r: { issue_id: string; relation: string }) => `${r.relation}:${r.issue_id}`).sort(),
      stagingIssues.map((i: { id: string }) => `introduced:${i.id}`).sort(),
    );
    t.deepEqual(
      (await read(`/v1/query/deploys?site_id=${tenant.siteId}&environment=staging`)).body.data.deploys.map(
        (d: { id: string }) => d.id,
      ),
      [st.body.data.id],
    );
  },
);

test.serial(
  'confusion_after and delta stay null until post-deploy traffic spans 5 minutes, then follow it each cycle',
  async (t) => {
    const tenant = await stack.newTenant();
    const db = stack.infra.database.db;
    const auth = { authorization: `Bearer ${tenant.secretKey}` };
    const N = Date.now();
    const rec = await postJson(`${stack.baseUrl}/v1/deploys`, { version: '9.0.0' }, auth);
    t.is(rec.status, 201);
    const id = rec.body.data.id;
    await backdateDeploy(id, N - 30 * MIN);
    const detail = async () =>
      (await getJson(`${stack.baseUrl}/v1/query/deploys/${id}?site_id=${tenant.siteId}`, auth)).body.data;
    // Traffic spanning 4 minutes (after the 5-minute grace of a time-window cohort).
    let sent = await send(
      tenant.publishableKey,
      spread(20, N - 24 * MIN, N - 20 * MIN, (i) => ({ signals: i % 2 ? [PAY] : [] })),
    );
    await allStored(tenant.siteId, sent);
    await stack.tick();
    const early = await detail();
    t.is(early.confusion_after, null);
    t.is(early.delta, null);
    t.like(early.cohort, { kind: 'time_window', sessions: 20 });
    t.is(early.verdict, 'WARN');
    t.regex(early.verdict_reasons.join(' '), /insufficient data/);
    // A spike rule the deploy's delta will exceed (spec "Recording a deploy", rule 4); nothing fires while delta is null.
    const rule = await postJson(
      `${stack.baseUrl}/v1/manage/alert-rules`,
      { site_id: tenant.siteId, name: 'deploy spike', trigger_type: 'spike', threshold: 0 },
      { authorization: `Bearer ${tenant.owner.token}` },
    );
    t.is(rule.status, 201);
    const deployAlerts = () =>
      db
        .selectFrom('alerts')
        .selectAll()
        .where('site_id', '=', tenant.siteId)
        .where('page', '=', 'deploy:9.0.0')
        .execute();
    // More traffic: now it spans 10 minutes.
    sent += await send(
      tenant.publishableKey,
      spread(20, N - 16 * MIN, N - 14 * MIN, () => ({})),
    );
    await allStored(tenant.siteId, sent);
    await stack.tick();
    const later = await detail();
    t.true(later.confusion_after > 0);
    t.is(later.delta, Math.round((later.confusion_after - later.confusion_before) * 10) / 10);
    const fired = await deployAlerts();
    t.is(fired.length, 1, 'a delta above the spike threshold fires one alert');
    t.like(fired[0], {
      rule_id: rule.body.data.id,
      trigger_type: 'spike',
      status: 'fired',
      score_before: later.confusion_before,
    });
    await stack.tick();
    t.is((await deployAlerts()).length, 1, 'one alert per rule and deploy, however many cycles measure it');
    t.is(later.cohort.sessions, 40);
    t.false(later.frozen);
    // Events before the deploy, or in its first 5 minutes, are not "after".
    sent += await send(
      tenant.publishableKey,
      spread(10, N - 29 * MIN, N - 26 * MIN, () => ({ signals: [PAY, PAY, PAY] })),
    );
    await allStored(tenant.siteId, sent);
    await stack.tick();
    t.is((await detail()).confusion_after, later.confusion_after);
  },
);

test.serial(
  'the CI gate answers within hours: PASS with open issues not yet verified; a closed issue signalling again is shown at once and FAILs the deploy when its look tests it',
  async (t) => {
    const tenant = await stack.newTenant();
    const auth = { authorization: `Bearer ${tenant.secretKey}` };
    const read = async (id: string) =>
      (await getJson(`${stack.baseUrl}/v1/query/deploys/${id}?site_id=${tenant.siteId}`, auth)).body.data;
    const couponNow = async () =>
      (await getJson(`${stack.baseUrl}/v1/query/issues/${coupon.id}?site_id=${tenant.siteId}`, auth)).body.data;
    const N = Date.now();
    const week = await weekBefore(tenant, N, 40, (i) => [
      ...(i % 4 === 0 ? [PAY] : []),
      ...(i % 4 === 1 ? [COUPON] : []),
    ]);
    let sent = week.sent;
    const { coupon } = week;
    t.is((await resolveIssue(tenant, coupon.id)).status, 200);
    await backdateResolution(coupon.id, N - 5 * HOUR);
    // The coupon's quiet period: 200 sessions without it (Pay still broken in a quarter of them).
    sent += await send(
      tenant.publishableKey,
      spread(200, N - 5 * HOUR, N - 3 * HOUR - 10 * MIN, (i) => ({ signals: i % 4 === 0 ? [PAY] : [] })),
    );

    // A quiet deploy: 20 minutes of clean traffic. Pay is tested at the 1 h look and not verified yet, which is no reason to wait.
    const quiet = (await postJson(`${stack.baseUrl}/v1/deploys`, { version: 'q1' }, auth)).body.data.id;
    await backdateDeploy(quiet, N - 3 * HOUR);
    sent += await send(
      tenant.publishableKey,
      spread(30, N - 3 * HOUR + 6 * MIN, N - 3 * HOUR + 28 * MIN, () => ({})),
    );
    await allStored(tenant.siteId, sent);
    await stack.tick();
    const q = await read(quiet);
    t.is(q.verdict, 'PASS', q.verdict_reasons.join('; '));
    t.true(
      q.related_issues.some(
        (r: { relation: string; record: { look: string; result: string } }) =>
          r.relation === 'still_failing' && r.record.look === '1h' && r.record.result === 'not_verified',
      ),
    );

    // The next deploy brings the coupon back in a quarter of its sessions, over two hours.
    const bad = (await postJson(`${stack.baseUrl}/v1/deploys`, { version: 'q2' }, auth)).body.data.id;
    await backdateDeploy(bad, N - 150 * MIN);
    sent += await send(
      tenant.publishableKey,
      spread(200, N - 145 * MIN, N - 10 * MIN, (i) => ({ signals: i % 4 === 0 ? [COUPON] : [] })),
    );
    await allStored(tenant.siteId, sent);
    // The engine's live rule shows it at once, for people to see, and leaves the status to a test.
    const live = await eventually(
      async () => {
        const c = await couponNow();
        return c.signalling_again ? c : undefined;
      },
      { timeoutMs: 30_000 },
    );
    t.is(live.status, 'resolved');
    t.is((await read(bad)).verdict === 'FAIL', false, 'no verdict without a test');

    await stack.tick();
    const after = await couponNow();
    t.is(after.status, 'regressed');
    t.false(after.signalling_again, 'regressed is no longer "signalling again"');
    t.like(
      after.verifications.find((r: { deploy_id: string }) => r.deploy_id === bad),
      { result: 'regressed', look: '1h', affected_sessions_before: 0, affected_sessions_after: 50 },
    );
    const b = await read(bad);
    t.is(b.verdict, 'FAIL');
    t.true(
      b.related_issues.some(
        (r: { issue_id: string; relation: string }) => r.issue_id === coupon.id && r.relation === 'regressed',
      ),
    );
    t.is((await read(quiet)).verdict, 'PASS', 'the regression belongs to the later deploy');
    const env = {
      FRICTION_BASE_URL: stack.baseUrl,
      FRICTION_SECRET_KEY: tenant.secretKey,
      FRICTION_SITE_ID: tenant.siteId,
    };
    t.is((await cliCheck(['--deploy', bad, '--timeout', '5s'], env)).code, 1);
    t.is((await cliCheck(['--deploy', quiet, '--timeout', '5s'], env)).code, 0);
  },
);
