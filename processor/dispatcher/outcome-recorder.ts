import type { Kysely } from 'kysely';
import type { Database } from '../../shared/db/database.ts';
import { deliveries } from '../../shared/http/metrics.ts';
import {
  abandonDeliveries,
  lockClaimedDeliveries,
  recordAttempts,
  type AttemptRecord,
  type ClaimedDelivery,
} from '../store/deliveries.store.ts';
import { openDegradation } from '../../shared/db/queries/degradation.queries.ts';
import type { Logger } from '../../shared/logger.ts';
import type { SendResult } from './channels.ts';
import { afterAttempt, nextRetryDelayMs, type AttemptOutcome, type EndpointHealth } from './retry-policy.ts';

/** One attempt made (or a delivery given up without one), waiting to be recorded. */
export interface Finished {
  d: ClaimedDelivery;
  result: SendResult;
  startedAt: Date;
  durationMs: number;
}
type Failed = Finished & { result: { kind: 'attempt'; outcome: Extract<AttemptOutcome, { ok: false }> } };

/** The record of a successful attempt (what recordAttempts and recordAndClaim store). */
export function successRecord(f: Finished): AttemptRecord {
  return attemptRecord(f, null);
}

function attemptRecord(f: Finished, nextAttemptAt: Date | null): AttemptRecord {
  const outcome = (f.result as { outcome: AttemptOutcome }).outcome;
  return {
    deliveryId: f.d.id,
    claimedAttempts: f.d.attempts,
    status: outcome.ok ? 'succeeded' : 'failed',
    httpStatus: outcome.logged ? outcome.logged.status : outcome.status,
    error: outcome.logged ? outcome.logged.error : outcome.ok ? null : outcome.error.slice(0, 1000),
    durationMs: f.durationMs,
    startedAt: f.startedAt,
    nextAttemptAt,
  };
}

export const isSucceeded = (f: Finished): boolean => f.result.kind === 'attempt' && f.result.outcome.ok;

/**
 * Writes the outcomes that are not plain successes: deliveries given up unsent (one statement per reason) and failed
 * attempts (one transaction per group, which locks their endpoints to count failure streaks and disable an endpoint:
 * 410, or 20 failures in a row over 5 days). Successes are written by the dispatcher's cycle with its next claim.
 */
export class OutcomeRecorder {
  private readonly db: Kysely<Database>;
  private readonly log: Logger;
  private readonly random: () => number;

  constructor(o: { db: Kysely<Database>; log: Logger; random: () => number }) {
    this.db = o.db;
    this.log = o.log;
    this.random = o.random;
  }

  /** Abandoned and failed outcomes of a group; returns how many statements (or transactions) it took. */
  async writeUnsuccessful(group: readonly Finished[], now: Date): Promise<number> {
    let statements = 0;
    const abandoned = group.flatMap((f) =>
      f.result.kind === 'abandon' ? [{ id: f.d.id, reason: f.result.reason }] : [],
    );
    if (abandoned.length > 0) {
      statements++;
      await abandonDeliveries(this.db, abandoned, now);
      for (const f of group)
        if (f.result.kind === 'abandon') deliveries.inc({ channel: f.d.channel, outcome: 'abandoned' });
    }
    const failed = group.filter((f): f is Failed => f.result.kind === 'attempt' && !f.result.outcome.ok);
    if (failed.length > 0) {
      statements++;
      await this.writeFailures(failed, now);
    }
    return statements;
  }

  /** Successes only, without a claim (a dispatcher stopping). */
  async writeSuccesses(succeeded: readonly Finished[], now: Date): Promise<void> {
    this.countSucceeded(succeeded, await recordAttempts(this.db, succeeded.map(successRecord), now));
  }

  /** Metrics and stale-claim warnings once successes are written (`written`: the deliveries the write moved on). */
  countSucceeded(succeeded: readonly Finished[], written: Set<string>): void {
    this.warnStale(succeeded, written);
    for (const f of succeeded) if (written.has(f.d.id)) deliveries.inc({ channel: f.d.channel, outcome: 'succeeded' });
  }

  /** Failed attempts: retry times, endpoint streaks and disabling, in one transaction for the group. */
  private async writeFailures(failed: Failed[], now: Date): Promise<void> {
    const counted = await this.db.transaction().execute(async (trx) => {
      const ours = await lockClaimedDeliveries(
        trx,
        failed.map((f) => ({ id: f.d.id, attempts: f.d.attempts })),
      );
      this.warnStale(failed, ours);
      const live = failed.filter((f) => ours.has(f.d.id));
      const webhookOf = (f: Failed) => (f.d.channel === 'webhook' ? f.d.endpoint_id : null);
      const endpointIds = [...new Set(live.map(webhookOf).filter((id): id is string => id !== null))].sort();
      // Locked in id order, so two dispatchers recording failures to the same endpoints never deadlock.
      const endpoints =
        endpointIds.length === 0
          ? []
          : await trx
              .selectFrom('webhook_endpoints')
              .select(['id', 'org_id', 'url', 'active', 'consecutive_failures', 'failing_since'])
              .where('id', 'in', endpointIds)
              .orderBy('id')
              .forUpdate()
              .execute();
      const streaks = new Map(
        endpoints.map((ep) => [
          ep.id,
          {
            ep,
            health: {
              consecutiveFailures: ep.consecutive_failures,
              failingSince: ep.failing_since?.getTime() ?? null,
            } as EndpointHealth,
            disable: null as string | null,
          },
        ]),
      );
      const records = live.map((f) => {
        const streak = streaks.get(webhookOf(f) ?? '');
        let stopRetrying = false;
        if (streak) {
          const h = afterAttempt(streak.health, f.result.outcome, now.getTime());
          streak.health = { consecutiveFailures: h.consecutiveFailures, failingSince: h.failingSince };
          stopRetrying = h.disable !== null;
          streak.disable ??= h.disable;
        }
        const delay = stopRetrying
          ? null
          : nextRetryDelayMs(f.d.attempts + 1, this.random(), f.result.outcome.retryAfterMs);
        return attemptRecord(f, delay === null ? null : new Date(now.getTime() + delay));
      });
      await recordAttempts(trx, records, now);
      for (const { ep, health, disable: reason } of streaks.values()) {
        const disable = reason !== null && ep.active;
        await trx
          .updateTable('webhook_endpoints')
          .set({
            consecutive_failures: health.consecutiveFailures,
            failing_since: health.failingSince === null ? null : new Date(health.failingSince),
            ...(disable ? { active: false, disabled_at: now, disabled_reason: reason, updated_at: now } : {}),
          })
          .where('id', '=', ep.id)
          .execute();
        if (disable) {
          await openDegradation(trx, {
            orgId: ep.org_id,
            kind: 'endpoint_disabled',
            subject: ep.id,
            message: `webhook endpoint ${ep.url} disabled: ${reason}`,
            details: { endpoint_id: ep.id, url: ep.url, reason },
            at: now,
          });
          this.log.warn({ endpoint: ep.id, reason }, 'webhook endpoint disabled');
        }
      }
      return live.map((f, i) => ({
        channel: f.d.channel,
        outcome: records[i].nextAttemptAt === null ? 'failed' : 'retrying',
      }));
    });
    // Counted after the commit: a rolled-back record is retried by its lease and counted then.
    for (const c of counted) deliveries.inc(c);
  }

  private warnStale(group: readonly Finished[], written: Set<string>): void {
    for (const f of group)
      if (!written.has(f.d.id))
        this.log.warn({ delivery: f.d.id }, 'delivery claim went stale before its attempt was recorded');
  }
}
