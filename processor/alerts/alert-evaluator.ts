import { setImmediate as yieldToEventLoop, setTimeout as rest } from 'node:timers/promises';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../shared/db/database.ts';
import { matchesPagePattern } from '../../shared/domain/page-pattern.ts';
import { newId } from '../../shared/ids.ts';
import type { Logger } from '../../shared/logger.ts';
import { alertNotification, type Alert } from '../../shared/notify/alert.ts';
import { enqueueOutbox } from '../../shared/notify/outbox.ts';
import {
  alertExists,
  coOccurrenceSessions,
  dailyScores,
  enabledRules,
  insertAlert,
  lastAlerts,
  lockSiteAlerts,
  pageObservations,
  pagesToEvaluate,
  resolveAlert,
  ruleStates,
  saveRuleStates,
  forgetRuleStates,
  type AlertRule,
  type LastAlert,
  type StoredRuleState,
} from '../store/alerts.store.ts';
import {
  ANOMALY_MIN_SESSIONS,
  ANOMALY_MIN_WEEKS,
  conditionOf,
  FLAP_WINDOW,
  SCORE_FOLLOWING,
  step,
  TRIGGER_TYPES,
  type Condition,
  type Decision,
  type PageObservation,
  type RuleState,
  type TriggerType,
} from './rules.ts';

const HOUR = 3600_000;
const DAY = 24 * HOUR;
/**
 * A tick evaluates a site's pages in transactions of this many pages: each holds the site's alert lock (which a batch
 * evaluating the site's score-following rules waits for) only as long as its chunk takes.
 */
const TICK_CHUNK_PAGES = 2000;
/**
 * Pairs decided between two turns of the event loop: about a millisecond of work, so a batch waiting on the thread
 * (the batches' and ingest's too) waits no longer than that for the tick.
 */
const YIELD_EVERY_PAIRS = 500;
/**
 * The share of a tick's wall time its chunks may be at work: after each chunk the tick rests as long as the chunk took
 * (at 0.5), so the batches have the database and both cores to themselves half the time. A chunk's statements and its
 * decisions compete with the batches for the same two resources; yielding the thread alone left the batches at 0.6-0.8×
 * their rate while a tick ran (docs/benchmarks.md, "tick at scale"). The tick takes about twice as long in exchange:
 * 10k pages × 7 rules is five chunks of about 0.1 s each on a quiet machine.
 */
const TICK_BUSY_SHARE = 0.5;

/**
 * A quiet pair: every result it remembers clear, no clock running, not held back. It is not stored: a (rule, page)
 * without a row is quiet, including one never evaluated (it counts as clear before its first evaluation), and a clear
 * result leaves a quiet pair quiet (step's fixed point). Runs of clear results of any length are one state to the
 * rules, which count only changes (rules.ts), so the one clear result here stands for all of them. A quiet site's
 * tick therefore reads no states and writes none, its first included.
 */
const quietState = (ruleId: string, page: string): StoredRuleState => ({
  rule_id: ruleId,
  page,
  recent: '0',
  consecutive: 0,
  clear_since: null,
  held_back_since: null,
  held_back_reason: null,
});
const isQuiet = (s: StoredRuleState) =>
  s.consecutive === 0 &&
  s.clear_since === null &&
  s.held_back_since === null &&
  s.held_back_reason === null &&
  /^0+$/.test(s.recent);
const sameTime = (a: Date | null, b: Date | null) =>
  a === null ? b === null : b !== null && a.getTime() === b.getTime();
const sameState = (a: StoredRuleState, b: StoredRuleState) =>
  a.recent === b.recent &&
  a.consecutive === b.consecutive &&
  sameTime(a.clear_since, b.clear_since) &&
  sameTime(a.held_back_since, b.held_back_since) &&
  a.held_back_reason === b.held_back_reason;

/**
 * The processor side of alerting: gathers page observations from the stored scores and signals, runs the pure
 * rule steps (rules.ts), and stores what they decide (alerts, rule state, notifications) in the caller's
 * transaction, so an alert exists exactly when the scores that raised it do. Rules watch the site's production:
 * every read here is of production's scores and signals (staging has its own, which no rule evaluates).
 * Every read and write is set-based (processor/store/alerts.store.ts): a site's evaluation costs a fixed number of
 * statements whatever its pages and rules, each bounded by time, and the site's alert lock keeps a batch and the tick
 * from deciding on the same (rule, page) at once.
 */
export class AlertEvaluator {
  private readonly log: Logger;
  constructor(opts: { log: Logger }) {
    this.log = opts.log;
  }

  /** After a batch wrote page scores: the score-following rules (spike, new_page, budget) of the touched pages. */
  async onScores(
    trx: Transaction<Database>,
    touched: readonly { siteId: string; page: string }[],
    now: number,
  ): Promise<number> {
    if (touched.length === 0) return 0;
    const bySite = new Map<string, Set<string>>();
    for (const t of touched) (bySite.get(t.siteId) ?? bySite.set(t.siteId, new Set()).get(t.siteId)!).add(t.page);
    const rules = await enabledRules(trx, [...bySite.keys()], SCORE_FOLLOWING);
    if (rules.length === 0) return 0;
    let n = 0;
    // Sorted: the locks of several sites are always taken in one order.
    for (const siteId of [...bySite.keys()].sort()) {
      const siteRules = rules.filter((r) => r.site_id === siteId);
      if (siteRules.length === 0) continue;
      await lockSiteAlerts(trx, siteId);
      n += await this.evaluateSite(trx, siteId, siteRules, [...bySite.get(siteId)!], now);
    }
    return n;
  }

  /**
   * Each scoring cycle: every rule of these sites over every page scored in the last 24 h (and pages with open
   * alerts). Each site on its own (a site that fails is logged and retried next cycle; the others go on), in
   * transactions of TICK_CHUNK_PAGES pages.
   */
  async tick(db: Kysely<Database>, siteIds: readonly string[], now: number): Promise<number> {
    let n = 0;
    const rules = await enabledRules(db, siteIds, TRIGGER_TYPES);
    for (const siteId of siteIds) {
      const siteRules = rules.filter((r) => r.site_id === siteId);
      if (siteRules.length === 0) continue;
      try {
        const pages = await pagesToEvaluate(db, siteId, new Date(now - DAY));
        for (let i = 0; i < pages.length; i += TICK_CHUNK_PAGES) {
          const chunk = pages.slice(i, i + TICK_CHUNK_PAGES);
          const started = performance.now();
          n += await db.transaction().execute(async (trx) => {
            await lockSiteAlerts(trx, siteId);
            return this.evaluateSite(trx, siteId, siteRules, chunk, now);
          });
          if (i + TICK_CHUNK_PAGES < pages.length)
            await rest(((performance.now() - started) * (1 - TICK_BUSY_SHARE)) / TICK_BUSY_SHARE);
        }
      } catch (err) {
        this.log.warn({ err, site: siteId }, 'alert evaluation failed for a site; next cycle retries');
      }
    }
    return n;
  }

  /**
   * A deploy whose `delta` exceeds a spike rule's threshold fires that rule once for the deploy (spec "Recording a
   * deploy", rule 4), on the site as a whole. For the deploys role: call it in the transaction storing the delta.
   * Returns the alerts created.
   */
  async fireForDeploy(
    trx: Transaction<Database>,
    d: { siteId: string; deployId: string; version: string; confusionBefore: number; confusionAfter: number },
    now: number,
  ): Promise<string[]> {
    const delta = d.confusionAfter - d.confusionBefore;
    const rules = (await enabledRules(trx, [d.siteId], ['spike'])).filter((r) => delta > r.threshold);
    if (rules.length === 0) return [];
    await lockSiteAlerts(trx, d.siteId);
    const ids: string[] = [];
    for (const r of rules) {
      const page = `deploy:${d.version}`;
      if (await alertExists(trx, r.id, page)) continue; // one alert per rule and deploy
      const cond: Condition = {
        holds: true,
        scoreBefore: d.confusionBefore,
        scoreAfter: d.confusionAfter,
        summary: `deploy ${d.version} raised the site score by ${Math.round(delta * 10) / 10} (threshold +${r.threshold})`,
      };
      ids.push(await this.fire(trx, r, page, cond, now, { deploy_id: d.deployId, version: d.version }));
    }
    return ids;
  }

  private async evaluateSite(
    trx: Transaction<Database>,
    siteId: string,
    rules: readonly AlertRule[],
    pages: readonly string[],
    now: number,
  ): Promise<number> {
    // Each rule with the pages it applies to (no pattern: all of them, the same array).
    const byRule = rules
      .map((r) => ({
        r,
        pages: r.page_pattern === null ? pages : pages.filter((p) => matchesPagePattern(r.page_pattern, p)),
      }))
      .filter((x) => x.pages.length > 0);
    if (byRule.length === 0) return 0;
    const triggers = new Set(byRule.map((x) => x.r.trigger_type));
    const pairPages = byRule.some((x) => x.pages === pages) ? pages : [...new Set(byRule.flatMap((x) => x.pages))];
    const ruleIds = byRule.map((x) => x.r.id);
    const obs = await this.observe(trx, siteId, pairPages, triggers, now);
    /** Rows by rule, then by page: no key string built per pair. */
    const perRule = <T extends { rule_id: string; page: string }>(rows: readonly T[]) => {
      const out = new Map<string, Map<string, T>>();
      for (const row of rows)
        (out.get(row.rule_id) ?? out.set(row.rule_id, new Map()).get(row.rule_id)!).set(row.page, row);
      return out;
    };
    const states = perRule(await ruleStates(trx, ruleIds, pairPages));
    // An alert fired before the longest cooldown no longer holds any of these rules back: only open ones matter then.
    const longestCooldownMs = Math.max(...rules.map((r) => r.cooldown_minutes)) * 60_000;
    const last = perRule(await lastAlerts(trx, ruleIds, pairPages, new Date(now - longestCooldownMs)));
    const writes: StoredRuleState[] = [];
    const quieted: StoredRuleState[] = [];
    let n = 0;
    let pairs = 0;
    for (const { r, pages: rulePages } of byRule) {
      const ruleStatesOf = states.get(r.id);
      const ruleLast = last.get(r.id);
      for (const p of rulePages) {
        // The thread is the batches' and ingest's too: a chunk's 14,000 pairs give it back now and then.
        if (++pairs % YIELD_EVERY_PAIRS === 0) await yieldToEventLoop();
        const o = obs.get(p);
        if (!o) continue;
        const cond = conditionOf(r.trigger_type, r.threshold, o, now);
        const latest = ruleLast?.get(p);
        const stored = ruleStatesOf?.get(p);
        // Quiet and still clear, no alert open (step's fixed point: the same state, no decision): nothing to do.
        if (!stored && !cond.holds && (!latest || latest.status === 'resolved')) continue;
        const next = this.decide(r, p, cond, stored ?? quietState(r.id, p), latest, now);
        // A quiet pair's row goes (it reads as quiet without one); a changed one is written.
        if (isQuiet(next.state)) {
          if (stored) quieted.push(stored);
        } else if (!stored || !sameState(stored, next.state)) writes.push(next.state);
        const { decision } = next;
        if (decision.kind === 'fire') {
          await this.fire(trx, r, p, decision.condition, now);
          n++;
        } else if (decision.kind === 'resolve') {
          await this.resolve(trx, decision.alertId, decision.reason, now);
          n++;
        }
      }
    }
    await saveRuleStates(trx, writes, new Date(now));
    await forgetRuleStates(trx, quieted);
    return n;
  }

  /** One (rule, page) step from its stored state: its decision (for the caller to carry out) and its next state. */
  private decide(
    r: AlertRule,
    p: string,
    cond: Condition,
    stored: StoredRuleState,
    latest: LastAlert | undefined,
    now: number,
  ): { decision: Decision; state: StoredRuleState } {
    const prior: RuleState = {
      recent: [...stored.recent].map((c) => c === '1'),
      consecutive: stored.consecutive,
      clearSince: stored.clear_since?.getTime() ?? null,
      heldBackSince: stored.held_back_since?.getTime() ?? null,
      activeAlertId: latest && latest.status !== 'resolved' ? latest.id : null,
      lastFiredAt: latest ? latest.triggered_at.getTime() : null,
    };
    const { state, decision } = step(
      { triggerType: r.trigger_type, cooldownMinutes: r.cooldown_minutes },
      prior,
      cond,
      now,
    );
    let heldReason: string | null = null;
    if (decision.kind === 'held_back') {
      heldReason = decision.reason;
      this.log.info({ rule: r.id, page: p, reason: decision.reason }, 'alert held back');
    }
    const write: StoredRuleState = {
      rule_id: r.id,
      page: p,
      recent: state.recent
        .slice(-FLAP_WINDOW)
        .map((b) => (b ? '1' : '0'))
        .join(''),
      consecutive: state.consecutive,
      clear_since: state.clearSince === null ? null : new Date(state.clearSince),
      held_back_since: state.heldBackSince === null ? null : new Date(state.heldBackSince),
      held_back_reason: state.heldBackSince === null ? null : (heldReason ?? stored.held_back_reason),
    };
    return { decision, state: write };
  }

  private async fire(
    trx: Transaction<Database>,
    r: AlertRule,
    page: string,
    c: Condition,
    now: number,
    extra: Record<string, unknown> = {},
  ): Promise<string> {
    const id = newId();
    const at = new Date(now);
    // The row and its events are one value: what webhooks receive is what the table holds.
    const alert: Alert = {
      id,
      site_id: r.site_id,
      rule_id: r.id,
      rule_name: r.name,
      page,
      trigger_type: r.trigger_type,
      score_before: c.scoreBefore,
      score_after: c.scoreAfter,
      status: 'fired',
      details: { summary: c.summary, threshold: r.threshold, ...extra },
      triggered_at: at,
      acknowledged_at: null,
      resolved_at: null,
      resolved_reason: null,
    };
    await insertAlert(trx, alert);
    const msgs = [alertNotification('alert.triggered', alert, at)];
    if (r.trigger_type === 'spike') msgs.push(alertNotification('score.spike', alert, at));
    await enqueueOutbox(trx, msgs);
    return id;
  }

  private async resolve(trx: Transaction<Database>, alertId: string, reason: string, now: number): Promise<void> {
    const at = new Date(now);
    const a = await resolveAlert(trx, alertId, reason, at);
    if (a) await enqueueOutbox(trx, [alertNotification('alert.resolved', a, at)]);
  }

  /** Everything the triggers in use need about these pages: one statement per kind of fact, over all the pages. */
  private async observe(
    trx: Transaction<Database>,
    siteId: string,
    pages: readonly string[],
    triggers: ReadonlySet<TriggerType>,
    now: number,
  ): Promise<Map<string, PageObservation>> {
    const anomaly = triggers.has('anomaly') ? { minWeeks: ANOMALY_MIN_WEEKS, minSessions: ANOMALY_MIN_SESSIONS } : null;
    const out = new Map<string, PageObservation>();
    for (const r of await pageObservations(trx, siteId, pages, anomaly))
      out.set(r.page, {
        page: r.page,
        score: r.score,
        sessions: r.sessions,
        previousScore: r.previous,
        firstSeenAt: r.firstSeen,
        ...(anomaly && { sameHourPastWeeks: r.weekly, last24h: r.last24h }),
      });
    if (triggers.has('trend')) {
      const daily = await dailyScores(trx, siteId, pages, new Date(now - 4 * DAY).toISOString().slice(0, 10));
      for (const [page, scores] of daily) {
        const o = out.get(page);
        if (o) o.daily = scores;
      }
    }
    if (triggers.has('co_occurrence')) {
      const co = await coOccurrenceSessions(trx, siteId, pages, new Date(now - DAY));
      for (const o of out.values()) o.coOccurrenceSessions = co.get(o.page) ?? 0;
    }
    return out;
  }
}
