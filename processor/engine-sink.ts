import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../shared/db/database.ts';
import type { FreshEventsSink } from './events.consumer.ts';
import type { IssueKeeper } from './issues/issue-keeper.ts';
import type { OutboxRelay } from './notify/outbox-relay.ts';
import type { ScoreKeeper } from './scoring/score-keeper.ts';
import type { StoredEvent } from './store/events.store.ts';
import type { Logger } from '../shared/logger.ts';
import { runDueTriage } from './issues/triage-job.ts';
import { pageWindowStart } from './engine/time.ts';
import type { AlertEvaluator } from './alerts/alert-evaluator.ts';
import { runDeployCycle } from './deploys/deploy-cycle.ts';

/**
 * Everything the processor derives from new events, in the batch transaction: page scores (ScoreKeeper), then
 * issues and elements (IssueKeeper, whose severity reads the page's sessions from the staged score windows).
 */
export class FrictionEngineSink implements FreshEventsSink {
  readonly scores: ScoreKeeper;
  readonly issues: IssueKeeper;
  private readonly relay: OutboxRelay | undefined;
  private readonly now: () => number;
  readonly alerts: AlertEvaluator | undefined;

  constructor(opts: { scores: ScoreKeeper; issues: IssueKeeper; relay?: OutboxRelay; now?: () => number; alerts?: AlertEvaluator }) {
    this.scores = opts.scores;
    this.issues = opts.issues;
    this.alerts = opts.alerts;
    this.relay = opts.relay;
    this.now = opts.now ?? Date.now;
  }

  async rebuild(db: Kysely<Database>, siteIds: readonly string[]): Promise<void> {
    const now = this.now();
    await this.scores.rebuild(db, siteIds, now);
    await this.issues.rebuild(db, siteIds, now);
  }

  async write(trx: Transaction<Database>, stored: readonly StoredEvent[]): Promise<() => void> {
    // Staging traffic never moves production scores, issues or alerts; the deploy cycle measures it from `events`.
    const fresh = stored.filter((e) => e.environment !== 'staging');
    const now = this.now();
    // Events older than the 24-hour score window change no score (reads ignore their hours), but folded they would
    // give their page a window with zero sessions in it, and a score row: a phantom page. They stay stored and
    // count in sessions and clusters as before.
    const windowStart = pageWindowStart(now);
    const scored = fresh.some((e) => e.ts < windowStart) ? fresh.filter((e) => e.ts >= windowStart) : fresh;
    const scores = await this.scores.stage(trx, scored, now);
    const issues = await this.issues.write(trx, fresh, now, scores.pageSessions);
    // Score-following alert rules, in the batch's transaction: an alert exists exactly when its scores do.
    const alerted = (await this.alerts?.onScores(trx, fresh, now)) ?? 0;
    return () => {
      scores.apply();
      issues.apply();
      if (issues.notified > 0 || alerted > 0) this.relay?.wake();
    };
  }

  /**
   * Time passing: hours leave the score window, days leave the cluster window, and once a day (at or after
   * `triageHourUtc`) the nightly triage runs for every owned site.
   */
  async tick(db: Kysely<Database>, siteIds: readonly string[], triageHourUtc: number, log: Logger): Promise<void> {
    const now = this.now();
    // One transaction for the scores and issues time changed: a failed tick writes nothing, and the keepers keep
    // what it was to write (pages emptied, clusters evicted) for the next one, so it changes nothing either.
    const pageSessions = (s: string, p: string) => this.scores.pageSessions(s, p, now);
    await db.transaction().execute(async (trx) => {
      const scored = await this.scores.tick(trx, now);
      const issues = await this.issues.tick(trx, now, pageSessions);
      return () => (scored.commit(), issues.commit());
    }).then((commit) => commit());
    await runDueTriage(db, siteIds, now, triageHourUtc, {
      pageSessions,
      windowAffectedSessions: (s, p, sel, type) => this.issues.windowAffectedSessions(s, p, sel, type, now),
    }, log);
    // Deploys: before/after, verification looks, regressions (processor/deploys; its own transaction per deploy).
    const alerts = this.alerts;
    await runDeployCycle(db, siteIds, now, log, alerts && ((trx, d, at) => alerts.fireForDeploy(trx, d, at)));
    await this.alerts?.tick(db, siteIds, now);
    // The tick, triage, deploy looks and alert rules may each have queued notifications: one wake relays them all.
    this.relay?.wake();
  }
}
