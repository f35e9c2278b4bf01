import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database } from '../../shared/db/database.ts';
import { matchesPagePattern } from '../../shared/domain/page-pattern.ts';
import { newId } from '../../shared/ids.ts';
import type { Logger } from '../../shared/logger.ts';
import { alertNotification, type Alert } from '../../shared/notify/alert.ts';
import { enqueueOutbox } from '../../shared/notify/outbox.ts';
import {
  conditionOf,
  FLAP_WINDOW,
  SCORE_FOLLOWING,
  step,
  TRIGGER_TYPES,
  type Condition,
  type PageObservation,
  type RuleState,
  type TriggerType,
} from './rules.ts';

type Db = Kysely<Database> | Transaction<Database>;
const HOUR = 3600_000;
const DAY = 24 * HOUR;
/** Same-hour samples looked back for the anomaly baseline. */
const ANOMALY_WEEKS = 8;

interface Rule {
  id: string;
  site_id: string;
  name: string;
  trigger_type: TriggerType;
  threshold: number;
  cooldown_minutes: number;
  page_pattern: string | null;
}

/**
 * The processor side of alerting: gathers page observations from the stored scores and signals, runs the pure
 * rule steps (rules.ts), and stores what they decide (alerts, rule state, notifications) in the caller's
 * transaction, so an alert exists exactly when the scores that raised it do. Rules watch the site's production:
 * every read here is of production's scores and signals (staging has its own, which no rule evaluates).
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
    const rules = await this.rulesOf(trx, [...bySite.keys()], SCORE_FOLLOWING);
    if (rules.length === 0) return 0;
    let n = 0;
    for (const [siteId, pages] of bySite) {
      const siteRules = rules.filter((r) => r.site_id === siteId);
      if (siteRules.length > 0) n += await this.evaluateSite(trx, siteId, siteRules, [...pages], now);
    }
    return n;
  }

  /** Each scoring cycle: every rule of these sites over every page scored in the last 24 h (and pages with open alerts). */
  async tick(db: Kysely<Database>, siteIds: readonly string[], now: number): Promise<number> {
    let n = 0;
    const rules = await this.rulesOf(db, siteIds, TRIGGER_TYPES);
    for (const siteId of siteIds) {
      const siteRules = rules.filter((r) => r.site_id === siteId);
      if (siteRules.length === 0) continue;
      try {
        n += await db.transaction().execute(async (trx) => {
          const pages = await trx
            .selectFrom('page_scores')
            .select('page')
            .distinct()
            .where('site_id', '=', siteId)
            .where('environment', '=', 'production')
            .where('window_start', '>=', new Date(now - DAY))
            .execute();
          const open = await trx
            .selectFrom('alerts')
            .select('page')
            .distinct()
            .where('site_id', '=', siteId)
            .where('status', '!=', 'resolved')
            .where('page', 'is not', null)
            .execute();
          return this.evaluateSite(
            trx,
            siteId,
            siteRules,
            [...new Set([...pages.map((p) => p.page), ...open.map((p) => p.page!)])],
            now,
          );
        });
      } catch (err) {
        this.log.warn(
          { err: (err as Error).message, site: siteId },
          'alert evaluation failed for a site; next cycle retries',
        );
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
    const rules = (await this.rulesOf(trx, [d.siteId], ['spike'])).filter((r) => delta > r.threshold);
    const ids: string[] = [];
    for (const r of rules) {
      const page = `deploy:${d.version}`;
      const exists = await trx
        .selectFrom('alerts')
        .select('id')
        .where('rule_id', '=', r.id)
        .where('page', '=', page)
        .executeTakeFirst();
      if (exists) continue; // one alert per rule and deploy
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

  private async rulesOf(db: Db, siteIds: readonly string[], triggers: readonly TriggerType[]): Promise<Rule[]> {
    if (siteIds.length === 0) return [];
    // NOTE: read every time (one indexed query): a rule disabled or deleted a moment ago fires nothing.
    return (await db
      .selectFrom('alert_rules')
      .select(['id', 'site_id', 'name', 'trigger_type', 'threshold', 'cooldown_minutes', 'page_pattern'])
      .where('site_id', 'in', [...siteIds])
      .where('enabled', '=', true)
      .where('trigger_type', 'in', [...triggers])
      .execute()) as Rule[];
  }

  private async evaluateSite(
    trx: Transaction<Database>,
    siteId: string,
    rules: readonly Rule[],
    pages: readonly string[],
    now: number,
  ): Promise<number> {
    const pairs = rules.flatMap((r) =>
      pages.filter((p) => matchesPagePattern(r.page_pattern, p)).map((p) => ({ r, p })),
    );
    if (pairs.length === 0) return 0;
    const triggers = new Set(pairs.map((x) => x.r.trigger_type));
    const obs = await this.observe(trx, siteId, [...new Set(pairs.map((x) => x.p))], triggers, now);
    const states = await this.loadStates(
      trx,
      pairs.map((x) => x.r.id),
    );
    let n = 0;
    for (const { r, p } of pairs) {
      const o = obs.get(p);
      if (!o) continue;
      const cond = conditionOf(r.trigger_type, r.threshold, o, now);
      const prior = await this.priorOf(trx, r.id, p, states.get(`${r.id}\u0000${p}`));
      const { state, decision } = step(
        { triggerType: r.trigger_type, cooldownMinutes: r.cooldown_minutes },
        prior.state,
        cond,
        now,
      );
      let heldReason: string | null = null;
      if (decision.kind === 'fire') {
        await this.fire(trx, r, p, decision.condition, now);
        n++;
      } else if (decision.kind === 'resolve') {
        await this.resolve(trx, decision.alertId, decision.reason, now);
        n++;
      } else if (decision.kind === 'held_back') {
        heldReason = decision.reason;
        this.log.info({ rule: r.id, page: p, reason: decision.reason }, 'alert held back');
      }
      await this.saveState(trx, r.id, p, state, heldReason ?? (state.heldBackSince ? prior.heldReason : null), now);
    }
    return n;
  }

  /** The stored memory of (rule, page), with the open alert and last firing read from the alerts themselves. */
  private async priorOf(
    trx: Transaction<Database>,
    ruleId: string,
    page: string,
    s: StoredState | undefined,
  ): Promise<{ state: RuleState; heldReason: string | null }> {
    const last = await trx
      .selectFrom('alerts')
      .select(['id', 'status', 'triggered_at'])
      .where('rule_id', '=', ruleId)
      .where('page', '=', page)
      .orderBy('triggered_at', 'desc')
      .limit(1)
      .executeTakeFirst();
    return {
      state: {
        recent: [...(s?.recent ?? '')].map((c) => c === '1'),
        consecutive: s?.consecutive ?? 0,
        clearSince: s?.clear_since?.getTime() ?? null,
        heldBackSince: s?.held_back_since?.getTime() ?? null,
        activeAlertId: last && last.status !== 'resolved' ? last.id : null,
        lastFiredAt: last ? last.triggered_at.getTime() : null,
      },
      heldReason: s?.held_back_reason ?? null,
    };
  }

  private async loadStates(trx: Transaction<Database>, ruleIds: readonly string[]): Promise<Map<string, StoredState>> {
    const rows = await trx
      .selectFrom('alert_rule_states')
      .selectAll()
      .where('rule_id', 'in', [...new Set(ruleIds)])
      .execute();
    return new Map(rows.map((r) => [`${r.rule_id}\u0000${r.page}`, r]));
  }

  private async saveState(
    trx: Transaction<Database>,
    ruleId: string,
    page: string,
    s: RuleState,
    heldReason: string | null,
    now: number,
  ): Promise<void> {
    const row = {
      rule_id: ruleId,
      page,
      recent: s.recent
        .slice(-FLAP_WINDOW)
        .map((b) => (b ? '1' : '0'))
        .join(''),
      consecutive: s.consecutive,
      clear_since: s.clearSince === null ? null : new Date(s.clearSince),
      held_back_since: s.heldBackSince === null ? null : new Date(s.heldBackSince),
      held_back_reason: s.heldBackSince === null ? null : heldReason,
      updated_at: new Date(now),
    };
    await trx
      .insertInto('alert_rule_states')
      .values(row)
      .onConflict((oc) => oc.columns(['rule_id', 'page']).doUpdateSet(row))
      .execute();
  }

  private async fire(
    trx: Transaction<Database>,
    r: Rule,
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
    await trx
      .insertInto('alerts')
      .values({ ...alert, details: JSON.stringify(alert.details) })
      .execute();
    await trx.updateTable('alert_rules').set({ last_fired_at: at }).where('id', '=', r.id).execute();
    const msgs = [alertNotification('alert.triggered', alert, at)];
    if (r.trigger_type === 'spike') msgs.push(alertNotification('score.spike', alert, at));
    await enqueueOutbox(trx, msgs);
    return id;
  }

  private async resolve(trx: Transaction<Database>, alertId: string, reason: string, now: number): Promise<void> {
    const at = new Date(now);
    const a = await trx
      .updateTable('alerts')
      .set({ status: 'resolved', resolved_at: at, resolved_reason: reason, updated_at: at })
      .where('id', '=', alertId)
      .where('status', '!=', 'resolved')
      .returningAll()
      .executeTakeFirst();
    if (a) await enqueueOutbox(trx, [alertNotification('alert.resolved', a, at)]);
  }

  /** Everything the triggers in use need about these pages, in a few queries per site. */
  private async observe(
    trx: Transaction<Database>,
    siteId: string,
    pages: readonly string[],
    triggers: ReadonlySet<TriggerType>,
    now: number,
  ): Promise<Map<string, PageObservation>> {
    const { rows } = await sql<{
      page: string;
      score: number;
      sessions: number;
      window_start: Date;
      previous: number | null;
      first_seen: Date;
    }>`
      select distinct on (page) page, score, sessions, window_start,
        lag(score) over (partition by page order by window_start) as previous,
        min(window_start) over (partition by page) as first_seen
      from page_scores where site_id = ${siteId} and environment = 'production' and page = any(${[...pages]}::text[])
      order by page, window_start desc`.execute(trx);
    const out = new Map<string, PageObservation>();
    for (const r of rows)
      out.set(r.page, {
        page: r.page,
        score: Number(r.score),
        sessions: r.sessions,
        previousScore: r.previous === null ? null : Number(r.previous),
        firstSeenAt: new Date(r.first_seen).getTime(),
      });
    if (triggers.has('trend')) {
      const daily = await trx
        .selectFrom('score_history')
        .select(['page', 'score'])
        .where('site_id', '=', siteId)
        .where('environment', '=', 'production')
        .where('page', 'in', [...pages])
        .where('day', '>=', new Date(now - 4 * DAY).toISOString().slice(0, 10))
        .orderBy('page')
        .orderBy('day')
        .execute();
      for (const d of daily) {
        const o = out.get(d.page);
        if (o) o.daily = [...(o.daily ?? []), Number(d.score)];
      }
    }
    if (triggers.has('anomaly')) {
      const hist = await trx
        .selectFrom('page_scores')
        .select(['page', 'score', 'sessions', 'window_start'])
        .where('site_id', '=', siteId)
        .where('environment', '=', 'production')
        .where('page', 'in', [...pages])
        .where('window_start', '>=', new Date(now - ANOMALY_WEEKS * 7 * DAY - HOUR))
        .execute();
      for (const o of out.values()) {
        const cur = rows.find((r) => r.page === o.page)!.window_start.getTime();
        const mine = hist.filter((h) => h.page === o.page);
        o.sameHourPastWeeks = mine
          .filter((h) => {
            const d = cur - h.window_start.getTime();
            return d > 0 && d % (7 * DAY) === 0;
          })
          .map((h) => ({ score: Number(h.score), sessions: h.sessions }));
        o.last24h = mine
          .filter((h) => {
            const d = cur - h.window_start.getTime();
            return d > 0 && d <= DAY;
          })
          .map((h) => ({ score: Number(h.score), sessions: h.sessions }));
      }
    }
    if (triggers.has('co_occurrence')) {
      const { rows: co } = await sql<{ page: string; n: number }>`
        select page, count(distinct session_id)::int as n from (
          select page, session_id, selector from signals
          where site_id = ${siteId} and environment = 'production' and page = any(${[...pages]}::text[]) and ts >= ${new Date(now - DAY)} and selector is not null
          group by page, session_id, selector having count(distinct signal_type) >= 2) s
        group by page`.execute(trx);
      for (const o of out.values()) o.coOccurrenceSessions = co.find((c) => c.page === o.page)?.n ?? 0;
    }
    return out;
  }
}

type StoredState = {
  recent: string;
  consecutive: number;
  clear_since: Date | null;
  held_back_since: Date | null;
  held_back_reason: string | null;
};
