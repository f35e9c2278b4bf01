import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../shared/db/database.ts';
import type { DeployCohort } from '../../shared/db/tables/deploys.table.ts';
import {
  BEFORE_WINDOW_MS,
  LOOKS,
  TIME_WINDOW_GRACE_MS,
  afterReady,
  afterWindowEnd,
  environmentOf,
  chooseCohort,
  chooseControl,
  concurrentPValue,
  strataCounts,
  VERIFIED_MAX_RATE_RATIO,
  type Control,
  type Stratum,
  dispersionOf,
  dueLook,
  fixPValue,
  floorDispersion,
  fixResult,
  holm,
  regressionPValue,
  regressionResult,
  type Bucket,
  type Diurnal,
  type IssueCounts,
} from '../../shared/domain/deploy-verification.ts';
import { round1 } from '../../shared/domain/score-summary.ts';
import type { Logger } from '../../shared/logger.ts';
import { confusionScore, overallScore, siteMeanFriction } from '../engine/confusion-score.ts';
import { canonicalSelector } from '../engine/selectors.ts';
import { insertIssueUpdates } from '../store/issues.store.ts';
import { enqueueOutbox, type OutboxMessage } from '../../shared/notify/outbox.ts';
import {
  countVersionSessions,
  hourlyPageSessions,
  insertVerifications,
  lastRegressedAt,
  linkIntroducedIssues,
  loadActiveDeploys,
  loadLookIssues,
  lockDeploy,
  markLookDone,
  nextDeployAt,
  pageSessionCounts,
  pageTraffic,
  regressedIssueIds,
  saveMeasurement,
  signalSessions,
  trafficSpan,
  type DeployRow,
  type TrafficScope,
  type VerificationWrite,
} from './deploys.store.ts';

type Db = Kysely<Database> | Transaction<Database>;
const DAY_MS = 86_400_000;
/** Looks run until the last one (7 d); a day of slack lets a processor that was down take it late. */
const LOOK_HORIZON_MS = LOOKS[LOOKS.length - 1].afterMs + DAY_MS;

/**
 * The overall confusion score of the traffic in scope, computed the way the page scores are (confusion-score.ts:
 * each page shrunk toward the scope's own mean, then averaged with sessions as weights).
 */
export async function scoreTraffic(db: Db, scope: TrafficScope) {
  const t = await pageTraffic(db, scope);
  const prior = { siteMeanFriction: siteMeanFriction(t.pages) };
  const score = overallScore(t.pages.map((p) => ({ score: confusionScore(p, prior).score, sessions: p.sessions })));
  return { score, sessions: t.sessions, firstMs: t.firstMs, lastMs: t.lastMs };
}

/** The after window of a deploy up to `until`: release-aware when post-deploy sessions report its version. */
async function afterScope(
  db: Db,
  d: DeployRow,
  until: number,
): Promise<{ scope: TrafficScope; kind: DeployCohort['kind'] }> {
  const recorded = d.recorded_at.getTime();
  const base: TrafficScope = {
    siteId: d.site_id,
    environment: environmentOf(d.environment),
    from: recorded,
    to: Math.max(recorded, until),
  };
  const kind = chooseCohort(await countVersionSessions(db, base, d.version));
  return {
    kind,
    scope:
      kind === 'version'
        ? { ...base, appVersion: d.version }
        : { ...base, from: Math.min(base.to, recorded + TIME_WINDOW_GRACE_MS) },
  };
}

/**
 * Fires the spike rules whose threshold a deploy's delta exceeds (spec "Recording a deploy", rule 4), in the
 * measurement's transaction; answers the alerts created. The alert evaluator supplies it (`fireForDeploy`).
 */
export type DeployDeltaAlerts = (
  trx: Transaction<Database>,
  d: { siteId: string; deployId: string; version: string; confusionBefore: number; confusionAfter: number },
  now: number,
) => Promise<string[]>;

/**
 * confusion_after and delta from post-deploy sessions, once they span 5 minutes; frozen at the window's end.
 * Answers confusion_after (null while the traffic is too short, or once frozen).
 */
async function measure(
  trx: Transaction<Database>,
  d: DeployRow,
  nextAt: number | null,
  now: number,
): Promise<number | null> {
  if (d.frozen_at !== null) return null;
  const end = afterWindowEnd(d.recorded_at.getTime(), nextAt);
  const { scope, kind } = await afterScope(trx, d, Math.min(now, end));
  const t = await scoreTraffic(trx, scope);
  const ready = afterReady(t.firstMs, t.lastMs);
  const cohort: DeployCohort | null =
    t.firstMs === null || t.lastMs === null
      ? null
      : { kind, from: new Date(t.firstMs).toISOString(), to: new Date(t.lastMs).toISOString(), sessions: t.sessions };
  await saveMeasurement(trx, d.id, {
    confusionAfter: ready ? t.score : null,
    delta: ready ? round1(t.score - d.confusion_before) : null,
    cohort,
    measuredUntil: Math.min(now, end),
    frozenAt: now >= end ? now : null,
  });
  return ready ? t.score : null;
}

interface Affected {
  sessions: Set<string>;
  /** Distinct affected sessions per hour bucket (the dispersion's buckets). */
  hourly: Map<number, Set<string>>;
  signals: number;
}

/** Affected sessions (in all and per hour) and signal count per (page, canonical selector, signal type) of the signal rows. */
function affectedByCluster(rows: Awaited<ReturnType<typeof signalSessions>>): Map<string, Affected> {
  const out = new Map<string, Affected>();
  for (const r of rows) {
    const k = `${r.page}\u0000${canonicalSelector(r.selector)}\u0000${r.signal}`;
    const a = out.get(k) ?? { sessions: new Set<string>(), hourly: new Map<number, Set<string>>(), signals: 0 };
    a.sessions.add(r.session_id);
    const h = a.hourly.get(r.hour) ?? new Set<string>();
    h.add(r.session_id);
    a.hourly.set(r.hour, h);
    a.signals += r.n;
    out.set(k, a);
  }
  return out;
}

type LookIssue = Awaited<ReturnType<typeof loadLookIssues>>[number];
const clusterKey = (i: LookIssue) => `${i.page}\u0000${i.cluster_selector}\u0000${i.signal_type}`;

/** A page's hourly buckets with one cluster's affected sessions in each. */
function bucketsOf(sessions: Map<number, number> | undefined, affected: Affected | undefined): Bucket[] {
  return [...(sessions ?? new Map<number, number>()).entries()].map(([hour, n]) => ({
    sessions: n,
    affected: Math.min(n, affected?.hourly.get(hour)?.size ?? 0),
    hour,
  }));
}

export type LookCounts = IssueCounts & { signalsBefore: number; signalsAfter: number };

/**
 * Counts of each issue in two scopes, with the dispersion model of its test from both windows' hourly buckets
 * (dispersionOf: the before window's daily cycle, rate variance and calm hours, each window's weighted exposure and
 * bucket size, the after window's peak hour).
 */
async function countsFor(
  db: Db,
  issues: readonly LookIssue[],
  before: TrafficScope,
  after: TrafficScope,
  cycle?: Diurnal,
) {
  const pages = [...new Set(issues.map((i) => i.page))];
  const [sb, sa, hb, ha, ab, aa] = await Promise.all([
    pageSessionCounts(db, before, pages),
    pageSessionCounts(db, after, pages),
    hourlyPageSessions(db, before, pages),
    hourlyPageSessions(db, after, pages),
    signalSessions(db, before, pages).then(affectedByCluster),
    signalSessions(db, after, pages).then(affectedByCluster),
  ]);
  return (i: LookIssue): LookCounts => {
    const beforeBuckets = bucketsOf(hb.get(i.page), ab.get(clusterKey(i)));
    const afterBuckets = bucketsOf(ha.get(i.page), aa.get(clusterKey(i)));
    return {
      sessionsBefore: sb.get(i.page) ?? 0,
      sessionsAfter: sa.get(i.page) ?? 0,
      affectedBefore: ab.get(clusterKey(i))?.sessions.size ?? 0,
      affectedAfter: aa.get(clusterKey(i))?.sessions.size ?? 0,
      signalsBefore: ab.get(clusterKey(i))?.signals ?? 0,
      signalsAfter: aa.get(clusterKey(i))?.signals ?? 0,
      ...dispersionOf(beforeBuckets, afterBuckets, cycle),
    };
  };
}

/**
 * Each issue's hourly strata of the after window: the new release's cohort and the concurrent control (sessions
 * still on another version in the same hours), with the signal counts of the hours both were seen in.
 */
async function strataFor(db: Db, issues: readonly LookIssue[], cohort: TrafficScope, control: TrafficScope) {
  const pages = [...new Set(issues.map((i) => i.page))];
  const [hn, hc, an, ac] = await Promise.all([
    hourlyPageSessions(db, cohort, pages),
    hourlyPageSessions(db, control, pages),
    signalSessions(db, cohort, pages),
    signalSessions(db, control, pages),
  ]);
  // Signals per (cluster, hour) of each cohort, for the record.
  const signalsByHour = (rows: typeof an) => {
    const out = new Map<string, number>();
    for (const r of rows) {
      const k = `${r.page}\u0000${canonicalSelector(r.selector)}\u0000${r.signal}\u0000${r.hour}`;
      out.set(k, (out.get(k) ?? 0) + r.n);
    }
    return out;
  };
  const [sn, sc] = [signalsByHour(an), signalsByHour(ac)];
  const [cn, cc] = [affectedByCluster(an), affectedByCluster(ac)];
  return (i: LookIssue) => {
    const newHours = hn.get(i.page) ?? new Map<number, number>();
    const controlHours = hc.get(i.page) ?? new Map<number, number>();
    const strata: (Stratum & { hour: number })[] = [];
    for (const [hour, n] of newHours) {
      const m = controlHours.get(hour) ?? 0;
      if (m === 0) continue;
      strata.push({
        hour,
        newSessions: n,
        controlSessions: m,
        newAffected: Math.min(n, cn.get(clusterKey(i))?.hourly.get(hour)?.size ?? 0),
        controlAffected: Math.min(m, cc.get(clusterKey(i))?.hourly.get(hour)?.size ?? 0),
      });
    }
    const signals = (m: Map<string, number>) =>
      strata.reduce((a, s) => a + (m.get(`${clusterKey(i)}\u0000${s.hour}`) ?? 0), 0);
    return { strata, signalsNew: signals(sn), signalsControl: signals(sc) };
  };
}

type StrataOf = Awaited<ReturnType<typeof strataFor>>;

/**
 * The test of one issue with its comparison: the concurrent control when the deploy's cohort is release-aware and
 * the old version's sessions of the same hours are enough to compare with (chooseControl, from exposure alone), else
 * the before window (or quiet period) with its dispersion.
 */
function decideComparison(
  i: LookIssue,
  windowCounts: LookCounts,
  strataOf: StrataOf | null,
  test: 'fix' | 'regression',
): { counts: LookCounts; pValue: number | null; control: Control } {
  const beforeRate = windowCounts.sessionsBefore > 0 ? windowCounts.affectedBefore / windowCounts.sessionsBefore : 0;
  const s = strataOf?.(i);
  if (s && chooseControl(s.strata, beforeRate) === 'concurrent') {
    const counts: LookCounts = {
      ...strataCounts(s.strata),
      signalsBefore: s.signalsControl,
      signalsAfter: s.signalsNew,
    };
    const pValue =
      test === 'fix'
        ? counts.affectedBefore > 0
          ? concurrentPValue(s.strata, 'decrease', VERIFIED_MAX_RATE_RATIO)
          : null
        : concurrentPValue(s.strata, 'increase', 1);
    return { counts, pValue, control: 'concurrent' };
  }
  return {
    counts: windowCounts,
    pValue: test === 'fix' ? fixPValue(windowCounts) : regressionPValue(windowCounts),
    control: 'before_window',
  };
}

/**
 * The verification look due now, if any: every open, triaged or in-progress issue of the deploy's environment is
 * tested for a fix on that environment's traffic, every issue of it closed before the deploy for a regression, and
 * every issue this deploy verified for a regression since its verification (a verified issue that comes back); each
 * result is recorded, and status changes are written with their history line and `issue.updated` in this
 * transaction. Returns the notifications queued.
 */
async function takeLook(trx: Transaction<Database>, d: DeployRow, nextAt: number | null, now: number): Promise<number> {
  const recorded = d.recorded_at.getTime();
  const look = dueLook(now - recorded, d.looks_done);
  if (look === null) return 0;
  // Traffic after the next deploy of this environment is that deploy's evidence, not this one's.
  const until = Math.min(now, nextAt ?? now);
  const { scope: after, kind } = await afterScope(trx, d, until);
  // With a release-aware cohort, the sessions still on another version in the same window are a concurrent control.
  const control: TrafficScope | null =
    kind === 'version' ? { ...after, appVersion: undefined, otherThanVersion: d.version } : null;
  // The fix test reaches past the next deploy: an issue fixed by this deploy stays fixed in the traffic after it
  // (unless a later deploy brings it back, which only makes this test harder), so a site that deploys several times
  // a day still gets the day of evidence ordinary fixes need. Regressions and the concurrent control stop at the
  // next deploy: there the next release is a different treatment.
  const fixFrom = kind === 'time_window' ? recorded + TIME_WINDOW_GRACE_MS : recorded;
  const sinceFix: TrafficScope = { ...after, from: fixFrom, to: Math.max(fixFrom, now) };
  // No look before the after cohort's traffic spans MIN_AFTER_SPAN_MS: the look stays due, and the one taken later
  // spends its alpha too (dueLook), so the first look taken always has data to test.
  const span = await trafficSpan(trx, sinceFix);
  if (!afterReady(span.firstMs, span.lastMs)) return 0;
  const issues = await loadLookIssues(trx, d.id, d.site_id, d.environment, d.recorded_at);
  const open = issues.filter((i) => i.status === 'open' || i.status === 'triaged' || i.status === 'in_progress');
  const alreadyRegressed = await regressedIssueIds(trx, d.id);
  const closed: LookIssue[] = [];
  for (const i of issues) {
    if (open.includes(i) || alreadyRegressed.has(i.id)) continue;
    // An issue regressed before this deploy is not this deploy's regression.
    if (i.status === 'regressed' && ((await lastRegressedAt(trx, i.id)) ?? 0) < recorded) continue;
    closed.push(i);
  }
  const records: VerificationWrite[] = [];
  const outbox: OutboxMessage[] = [];
  const history: Parameters<typeof insertIssueUpdates>[1][number][] = [];
  const at = new Date(now).toISOString();
  const record = (
    i: LookIssue,
    c: LookCounts,
    test: 'fix' | 'regression',
    result: string,
    pValue: number | null,
    control: Control,
  ) =>
    records.push({
      deployId: d.id,
      issueId: i.id,
      siteId: d.site_id,
      look: look.name,
      test,
      result,
      signalCountBefore: c.signalsBefore,
      signalCountAfter: c.signalsAfter,
      affectedBefore: c.affectedBefore,
      affectedAfter: c.affectedAfter,
      sessionsBefore: c.sessionsBefore,
      sessionsAfter: c.sessionsAfter,
      pValue,
      alpha: look.alpha,
      at: now,
      control,
    });
  /**
   * The results of one test over `issues` (`decided[k]` is issue k's comparison): p-values Holm-corrected together
   * at the look's alpha, each result recorded.
   */
  const settle = <R extends string>(
    issues: readonly LookIssue[],
    decided: readonly { counts: LookCounts; pValue: number | null; control: Control }[],
    test: 'fix' | 'regression',
    resultOf: (c: LookCounts, pValue: number | null, significant: boolean) => R,
  ) => {
    const significant = holm(
      decided.map((x) => x.pValue),
      look.alpha,
    );
    return issues.map((i, k) => {
      const { counts: c, pValue: p, control } = decided[k]!;
      const result = resultOf(c, p, significant[k]!);
      record(i, c, test, result, p, control);
      return { i, c, p, result };
    });
  };
  /** Moves `i` to `status`: its row now, and the history entry and notification written with the look. */
  const transition = async (i: LookIssue, status: 'verified' | 'regressed', reason: string) => {
    await setStatus(trx, i.id, status, now);
    history.push({
      issueId: i.id,
      source: 'deploy',
      kind: status,
      changes: { status, deploy_id: d.id, deploy_version: d.version },
      reason,
    });
    outbox.push({
      kind: 'issue.updated',
      msgId: `issue.updated:${i.id}:deploy:${d.id}:${look.name}`,
      payload: {
        event: 'issue.updated',
        occurred_at: at,
        changes: { status },
        deploy: { id: d.id, version: d.version },
        issue: {
          id: i.id,
          site_id: d.site_id,
          environment: d.environment,
          page: i.page,
          element_selector: i.selector,
          signal_type: i.signal_type,
          title: i.title,
          status,
          signal_count: i.signal_count,
          affected_sessions: i.affected_sessions,
          severity: i.severity,
        },
      },
    });
  };

  // Each family (the open issues' fix tests, the closed issues' regression tests) is corrected with Holm at the
  // look's alpha: a no-op deploy over 20 unchanged open issues verifies any of them at most alpha of the time.
  if (open.length > 0) {
    const counts = await countsFor(
      trx,
      open,
      { ...after, appVersion: undefined, from: recorded - BEFORE_WINDOW_MS, to: recorded },
      sinceFix,
    );
    const strataOf = control ? await strataFor(trx, open, after, control) : null;
    const decided = open.map((i) => decideComparison(i, counts(i), strataOf, 'fix'));
    for (const { i, c, p, result } of settle(open, decided, 'fix', fixResult)) {
      if (result === 'verified' && !i.frozen) {
        await transition(
          i,
          'verified',
          `deploy ${d.version}: affected sessions per page-session fell from ${c.affectedBefore}/${c.sessionsBefore} to ${c.affectedAfter}/${c.sessionsAfter} (p = ${p!.toExponential(2)}, look ${look.name}, ${open.length} open issue(s) tested)`,
        );
      }
    }
  }
  const cs: { counts: LookCounts; pValue: number | null; control: Control }[] = [];
  const closedStrata = control && closed.length > 0 ? await strataFor(trx, closed, after, control) : null;
  for (const i of closed) {
    const resolved = i.resolved_at!.getTime();
    if (resolved >= recorded) {
      // Verified by this deploy: the issue-level test since the fix. Before is the new release's traffic up to the
      // verification (the residual rate the fix test measured), after is its traffic since. Hours, not days, before:
      // the week before the deploy (168 hours) gives the daily cycle and bounds the rate variances from below.
      const week = (
        await countsFor(
          trx,
          [i],
          { ...after, appVersion: undefined, from: recorded - BEFORE_WINDOW_MS, to: recorded },
          after,
        )
      )(i);
      const c = (
        await countsFor(
          trx,
          [i],
          { ...after, to: Math.max(after.from, resolved) },
          { ...after, from: Math.max(after.from, resolved) },
          week.dispersion!.diurnal,
        )
      )(i);
      const since = { ...c, dispersion: floorDispersion(c.dispersion!, week.dispersion!) };
      // The old version is the unfixed one here: no concurrent control for the test since the fix.
      cs.push(decideComparison(i, since, null, 'regression'));
      continue;
    }
    // Before is the issue's quiet period: since it was closed, at most 7 days before the deploy. The old version
    // had the fix too, so its sessions of the same hours are a concurrent control when there are enough.
    const from = Math.max(recorded - BEFORE_WINDOW_MS, resolved);
    cs.push(
      decideComparison(
        i,
        (await countsFor(trx, [i], { ...after, appVersion: undefined, from, to: recorded }, after))(i),
        closedStrata,
        'regression',
      ),
    );
  }
  for (const { i, c, result } of settle(closed, cs, 'regression', regressionResult)) {
    if (result === 'regressed' && i.status !== 'regressed' && !i.frozen) {
      await transition(
        i,
        'regressed',
        `deploy ${d.version}: ${c.affectedAfter} of ${c.sessionsAfter} page-sessions affected after the deploy, ${c.affectedBefore} of ${c.sessionsBefore} in the quiet period before (look ${look.name})`,
      );
    }
  }
  await insertVerifications(trx, records);
  await insertIssueUpdates(trx, history);
  await enqueueOutbox(trx, outbox);
  await markLookDone(trx, d.id, look.name);
  return outbox.length;
}

async function setStatus(
  trx: Transaction<Database>,
  id: string,
  status: 'verified' | 'regressed',
  now: number,
): Promise<void> {
  await trx
    .updateTable('ux_issues')
    .set({ status, updated_at: new Date(now), ...(status === 'verified' ? { resolved_at: new Date(now) } : {}) })
    .where('id', '=', id)
    .execute();
}

/**
 * One scoring cycle's deploy work for the owned sites: each deploy still measured or with looks left is measured,
 * linked to the issues it introduced and verified at its due look, in its own transaction (a deploy that fails does
 * not hold the others back). A staging deploy is measured, linked and verified on staging's traffic and issues; only
 * a production deploy's delta can fire a spike alert (alert rules watch production). Returns the notifications
 * queued (the caller wakes the outbox relay).
 */
export async function runDeployCycle(
  db: Kysely<Database>,
  siteIds: readonly string[],
  now: number,
  log: Logger,
  deltaAlerts?: DeployDeltaAlerts,
): Promise<number> {
  let notified = 0;
  for (const candidate of await loadActiveDeploys(db, siteIds, now, LOOK_HORIZON_MS)) {
    try {
      notified += await db.transaction().execute(async (trx) => {
        const d = await lockDeploy(trx, candidate.id);
        if (!d) return 0;
        const nextAt = await nextDeployAt(trx, d);
        const after = await measure(trx, d, nextAt, now);
        const alerted =
          after === null || !deltaAlerts || d.environment !== 'production'
            ? []
            : await deltaAlerts(
                trx,
                {
                  siteId: d.site_id,
                  deployId: d.id,
                  version: d.version,
                  confusionBefore: d.confusion_before,
                  confusionAfter: after,
                },
                now,
              );
        await linkIntroducedIssues(trx, d, nextAt, LOOK_HORIZON_MS);
        return alerted.length + (await takeLook(trx, d, nextAt, now));
      });
    } catch (err) {
      log.warn({ err, deploy: candidate.id }, 'deploy measurement failed');
    }
  }
  return notified;
}
