import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../shared/db/database.ts';
import type { FreshEventsSink } from './events.consumer.ts';
import { IssueKeeper } from './issues/issue-keeper.ts';
import type { OutboxRelay } from './notify/outbox-relay.ts';
import { ScoreKeeper } from './scoring/score-keeper.ts';
import type { StoredEvent } from './store/events.store.ts';
import type { Logger } from '../shared/logger.ts';
import { runDueTriage } from './issues/triage-job.ts';
import { pageWindowStart } from './engine/time.ts';
import type { AlertEvaluator } from './alerts/alert-evaluator.ts';
import { runDeployCycle } from './deploys/deploy-cycle.ts';
import { ENVIRONMENTS, type Environment } from '../shared/domain/deploy-verification.ts';
import { applySiteRetention, runRetentionPolicies } from '../shared/tenancy/retention.ts';

/** The engine state of one environment: its score windows and its issue clusters. */
export interface EnvironmentEngine {
  readonly scores: ScoreKeeper;
  readonly issues: IssueKeeper;
}
import { snapshotFromState, type SiteSnapshot } from './engine/recompute.ts';

/**
 * Everything the processor derives from new events, in the batch transaction: page scores (ScoreKeeper), then
 * issues and elements (IssueKeeper, whose severity reads the page's sessions from the staged score windows).
 * Production and staging are folded apart, each into its own keepers (state per site and environment), so staging
 * traffic never moves production's scores or issues; alert rules read production's only (issue 15).
 */
export class FrictionEngineSink implements FreshEventsSink {
  readonly engines: Readonly<Record<Environment, EnvironmentEngine>>;
  private readonly relay: OutboxRelay | undefined;
  private readonly now: () => number;
  readonly alerts: AlertEvaluator | undefined;

  /** runRetentionPolicies at most once an hour (their schedules are daily and twice daily); 0: not yet. */
  private readonly retentionPolicies: boolean;
  private retentionPoliciesAt = 0;

  /**
   * `retentionPolicies`: the tick runs TimescaleDB's retention policies itself (the embedded database, where no
   * background worker runs them: runRetentionPolicies).
   */
  constructor(opts: {
    log: Logger;
    relay?: OutboxRelay;
    now?: () => number;
    alerts?: AlertEvaluator;
    retentionPolicies?: boolean;
  }) {
    const engine = (environment: Environment): EnvironmentEngine => ({
      scores: new ScoreKeeper({ log: opts.log, environment }),
      issues: new IssueKeeper({ log: opts.log, environment }),
    });
    this.engines = { production: engine('production'), staging: engine('staging') };
    this.alerts = opts.alerts;
    this.relay = opts.relay;
    this.now = opts.now ?? Date.now;
    this.retentionPolicies = opts.retentionPolicies ?? false;
  }

  async rebuild(db: Kysely<Database>, siteIds: readonly string[]): Promise<void> {
    const now = this.now();
    await ScoreKeeper.rebuildAll(
      db,
      { production: this.engines.production.scores, staging: this.engines.staging.scores },
      siteIds,
      now,
    );
    // Signals are indexed by (site, environment, page, ts): an environment without traffic costs an empty index range.
    for (const environment of ENVIRONMENTS) await this.engines[environment].issues.rebuild(db, siteIds, now);
  }

  /** What memory holds for a site's environment at `now`, in the shape `recomputeSite` gives from the stored rows. */
  snapshot(siteId: string, now: number, environment: Environment = 'production'): SiteSnapshot {
    const { scores, issues } = this.engines[environment];
    return snapshotFromState(scores.windows, issues.clusters, siteId, now);
  }

  async stage(trx: Transaction<Database>, stored: readonly StoredEvent[]): Promise<() => void> {
    const now = this.now();
    // Production-only batches (nearly all) go through as they are; a batch with staging events is split once.
    const production = stored.some((e) => e.environment === 'staging')
      ? stored.filter((e) => e.environment !== 'staging')
      : stored;
    const staging = production === stored ? [] : stored.filter((e) => e.environment === 'staging');
    const applies: (() => void)[] = [];
    let notified = 0;
    for (const [environment, events] of [
      ['production', production],
      ['staging', staging],
    ] as const) {
      if (events.length === 0) continue;
      const staged = await this.stageEnvironment(trx, this.engines[environment], events, now);
      applies.push(staged.apply);
      notified += staged.notified;
    }
    // Score-following alert rules, in the batch's transaction: an alert exists exactly when its scores do.
    // Production's traffic only: alert rules watch the site's production (issue 15).
    const alerted = production.length > 0 ? ((await this.alerts?.onScores(trx, production, now)) ?? 0) : 0;
    return () => {
      for (const apply of applies) apply();
      if (notified > 0 || alerted > 0) this.relay?.wake();
    };
  }

  /** Folds one environment's events of a batch into its keepers, writing in `trx`; `apply` makes them current after the commit. */
  private async stageEnvironment(
    trx: Transaction<Database>,
    engine: EnvironmentEngine,
    events: readonly StoredEvent[],
    now: number,
  ) {
    // Events older than the 24-hour score window change no score (reads ignore their hours), but folded they would
    // give their page a window with zero sessions in it, and a score row: a phantom page. They stay stored and
    // count in sessions and clusters as before.
    const windowStart = pageWindowStart(now);
    const scored = events.some((e) => e.ts < windowStart) ? events.filter((e) => e.ts >= windowStart) : events;
    const scores = await engine.scores.stage(trx, scored, now);
    const issues = await engine.issues.stage(trx, events, now, scores.pageSessions);
    return { apply: () => (scores.apply(), issues.apply()), notified: issues.notified };
  }

  /**
   * Time passing: hours leave the score window, days leave the cluster window, and once a day (at or after
   * `triageHourUtc`) the nightly triage runs for every owned site.
   */
  /**
   * Applies pending erasures of these sites (docs/privacy.md): the API deleted the rows; here each affected site's
   * windows and clusters are dropped and rebuilt from what remains, and its scores, issues and elements rewritten,
   * in one transaction with marking the erasures applied (a failure leaves them pending for the next tick).
   */
  async applyErasures(db: Kysely<Database>, siteIds: readonly string[], log: Logger): Promise<number> {
    if (siteIds.length === 0) return 0;
    const pending = await db
      .selectFrom('privacy_erasures')
      .select(['id', 'site_id'])
      .where('applied_at', 'is', null)
      .where('site_id', 'in', [...siteIds])
      .execute();
    const sites = [...new Set(pending.map((p) => p.site_id))];
    for (const siteId of sites) {
      const now = this.now();
      for (const environment of ENVIRONMENTS) {
        const { scores, issues } = this.engines[environment];
        scores.forgetSite(siteId);
        issues.forgetSite(siteId);
        await scores.rebuild(db, [siteId], now);
        await issues.rebuild(db, [siteId], now);
      }
      await db.transaction().execute(async (trx) => {
        for (const environment of ENVIRONMENTS) {
          const { scores, issues } = this.engines[environment];
          await scores.rescoreSite(trx, siteId, now);
          await issues.reconcileSite(trx, siteId, now, (s, p) => scores.pageSessions(s, p, now));
        }
        const ids = pending.filter((p) => p.site_id === siteId).map((p) => p.id);
        await trx
          .updateTable('privacy_erasures')
          .set({ applied_at: new Date(now) })
          .where('id', 'in', ids)
          .execute();
      });
      log.info({ site_id: siteId }, 'erasure applied: site state rebuilt, scores, issues and elements rewritten');
    }
    return sites.length;
  }

  /** The part of the tick that changes the keepers' memory: the caller holds the tick gate alone (TickGate). */
  async tick(db: Kysely<Database>, siteIds: readonly string[], triageHourUtc: number, log: Logger): Promise<void> {
    await this.applyErasures(db, siteIds, log);
    const now = this.now();
    const live = (environment: Environment) => {
      const { scores, issues } = this.engines[environment];
      return {
        pageSessions: (s: string, p: string) => scores.pageSessions(s, p, now),
        windowAffectedSessions: (s: string, p: string, sel: string, type: string) =>
          issues.windowAffectedSessions(s, p, sel, type, now),
      };
    };
    // One transaction for the scores and issues time changed: a failed tick writes nothing, and the keepers keep
    // what it was to write (pages emptied, clusters evicted) for the next one, so it changes nothing either.
    await db
      .transaction()
      .execute(async (trx) => {
        const commits: (() => void)[] = [];
        for (const environment of ENVIRONMENTS) {
          const { scores, issues } = this.engines[environment];
          commits.push(
            (await scores.tick(trx, now)).commit,
            (await issues.tick(trx, now, live(environment).pageSessions)).commit,
          );
        }
        return () => commits.forEach((commit) => commit());
      })
      .then((commit) => commit());
    await runDueTriage(db, siteIds, now, triageHourUtc, live, log);
    this.relay?.wake();
  }

  /**
   * The part of the tick that reads and writes only the database (retention, deploy looks, alert rules): it runs
   * beside the partitions' batches, outside the tick gate, so a slow pass over many pages never stalls ingestion.
   * Each step's failure stays its own: the next steps run, the next tick retries it.
   */
  async tickDatabase(db: Kysely<Database>, siteIds: readonly string[], log: Logger): Promise<void> {
    const now = this.now();
    const steps: [string, () => Promise<unknown>][] = [
      // Sites with a shorter retention than the instance's (their own retention_days): their old raw rows go.
      [
        'site retention',
        async () => {
          const expired = await applySiteRetention(db, siteIds, new Date(now));
          if (expired > 0) log.info({ rows: expired }, 'site retention applied');
        },
      ],
      // The instance's retention where no TimescaleDB scheduler runs it: chunks past it are dropped by the database's
      // clock (the processor's may be a test's).
      [
        'retention policies',
        async () => {
          if (!this.retentionPolicies || Date.now() - this.retentionPoliciesAt < 3_600_000) return;
          this.retentionPoliciesAt = Date.now();
          log.debug({ jobs: await runRetentionPolicies(db) }, 'retention policies run');
        },
      ],
      // Deploys: before/after, verification looks, regressions (processor/deploys; its own transaction per deploy).
      [
        'deploy looks',
        () => {
          const alerts = this.alerts;
          return runDeployCycle(db, siteIds, now, log, alerts && ((trx, d, at) => alerts.fireForDeploy(trx, d, at)));
        },
      ],
      ['alert rules', async () => this.alerts?.tick(db, siteIds, now)],
    ];
    for (const [step, run] of steps) await run().catch((err: unknown) => log.error({ err, step }, 'tick step failed'));
    // Deploy looks and alert rules may have queued notifications: one wake relays them all.
    this.relay?.wake();
  }
}
