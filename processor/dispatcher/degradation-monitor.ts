import { sql, type Kysely } from 'kysely';
import type { Bus } from '../../shared/bus/bus.ts';
import type { Topology } from '../../shared/contracts/subjects.ts';
import type { Database } from '../../shared/db/database.ts';
import {
  openDegradation,
  recoverDegradation,
  type DegradationKind,
} from '../../shared/db/queries/degradation.queries.ts';
import { orgUsage } from '../../shared/db/queries/usage.queries.ts';
import type { Logger } from '../../shared/logger.ts';
import { limitsOf, monthStart } from '../../shared/tenancy/plans.ts';

/** How often the pipeline's health is checked. */
export const CHECK_EVERY_MS = 30_000;
/** Dead-lettered batches within this window keep the `dead_letters` event open. */
export const DEAD_LETTER_WINDOW_MS = 3600_000;

/** When a partition's processor counts as lagging: more uncommitted messages, or an older oldest one, than this. */
export interface LagBound {
  messages: number;
  seconds: number;
}

export interface Finding {
  kind: DegradationKind;
  subject: string;
  orgId: string | null;
  degraded: boolean;
  message: string;
  details?: Record<string, unknown>;
}

export interface DegradationMonitorOptions {
  db: Kysely<Database>;
  bus: Bus;
  topology: Topology;
  lagBound: LagBound;
  log: Logger;
  now?: () => number;
}

/**
 * Records when the pipeline degrades and recovers (`degradation_events`, read by /v1/query/degradation):
 * bus unreachable, database unreachable (stored once it answers again, with when it went away), a partition's
 * processor lagging beyond the bound, batches dead-lettered in the last hour, and orgs over their monthly session
 * quota. Endpoint disabling is recorded by the dispatcher itself. Several dispatchers may run this: one open event
 * per (kind, subject) is kept.
 */
export class DegradationMonitor {
  private readonly o: DegradationMonitorOptions;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | undefined;
  private dbDownSince: number | null = null;
  private running: Promise<void> = Promise.resolve();

  constructor(o: DegradationMonitorOptions) {
    this.o = o;
    this.now = o.now ?? Date.now;
  }

  start(): void {
    this.timer = setInterval(() => {
      this.running = this.check().then(
        () => undefined,
        (err: unknown) => this.o.log.warn({ err }, 'degradation check failed'),
      );
    }, CHECK_EVERY_MS);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  /** One round of checks (also called by tests). */
  async check(): Promise<Finding[]> {
    const now = new Date(this.now());
    try {
      await sql`select 1`.execute(this.o.db);
    } catch (err) {
      this.dbDownSince ??= now.getTime();
      this.o.log.error({ err }, 'database unreachable');
      return [
        {
          kind: 'database_unreachable',
          subject: 'database',
          orgId: null,
          degraded: true,
          message: 'the database does not answer',
        },
      ];
    }
    const findings: Finding[] = [];
    if (this.dbDownSince !== null) {
      const since = new Date(this.dbDownSince);
      this.dbDownSince = null;
      await openDegradation(this.o.db, {
        orgId: null,
        kind: 'database_unreachable',
        subject: 'database',
        message: 'the database did not answer',
        at: since,
      });
      await recoverDegradation(this.o.db, 'database_unreachable', 'database', now);
    }
    const busOk = await this.o.bus.healthy().catch(() => false);
    findings.push({
      kind: 'bus_unreachable',
      subject: 'bus',
      orgId: null,
      degraded: !busOk,
      message: `the ${this.o.bus.kind} bus does not accept publishes`,
    });
    if (busOk) findings.push(...(await this.lagFindings()));
    const dl = await sql<{
      n: number;
    }>`select count(*)::int as n from dead_letters where created_at >= ${new Date(now.getTime() - DEAD_LETTER_WINDOW_MS)}`.execute(
      this.o.db,
    );
    const n = dl.rows[0]!.n;
    findings.push({
      kind: 'dead_letters',
      subject: 'pipeline',
      orgId: null,
      degraded: n > 0,
      message: `${n} message(s) dead-lettered in the last hour`,
      details: { count: n },
    });
    for (const org of await this.o.db.selectFrom('orgs').select('id').execute()) {
      const u = await orgUsage(this.o.db, org.id, monthStart(now));
      if (!u) continue;
      const limit = limitsOf(u, now).sessionsPerMonth;
      findings.push({
        kind: 'over_quota',
        subject: org.id,
        orgId: org.id,
        degraded: limit !== null && u.sessions > limit,
        message: `${u.sessions} sessions this month, plan ${u.plan} allows ${limit}`,
        details: { sessions: u.sessions, limit },
      });
    }
    for (const f of findings) {
      if (f.degraded) {
        if (
          await openDegradation(this.o.db, {
            orgId: f.orgId,
            kind: f.kind,
            subject: f.subject,
            message: f.message,
            details: f.details,
            at: now,
          })
        )
          this.o.log.warn({ kind: f.kind, subject: f.subject }, f.message);
      } else if (await recoverDegradation(this.o.db, f.kind, f.subject, now))
        this.o.log.info({ kind: f.kind, subject: f.subject }, 'recovered');
    }
    return findings;
  }

  /**
   * One finding per event partition whose durable consumer exists (a partition no processor has ever consumed has
   * no consumer yet, and nothing to be behind on). Every partition is checked, whichever processor owns it.
   */
  private async lagFindings(): Promise<Finding[]> {
    const { messages: maxMessages, seconds: maxSeconds } = this.o.lagBound;
    const out: Finding[] = [];
    for (let p = 0; p < this.o.topology.partitions; p++) {
      const lag = await this.o.bus
        .consumerLag(this.o.topology.eventsStream, this.o.topology.partitionConsumer(p))
        .catch((err: unknown) => {
          this.o.log.warn({ err, partition: p }, 'processor lag unreadable');
          return null;
        });
      if (!lag) continue;
      const ageS = lag.oldestAgeMs === null ? 0 : Math.round(lag.oldestAgeMs / 1000);
      out.push({
        kind: 'processor_lag',
        subject: `partition ${p}`,
        orgId: null,
        degraded: lag.messages > maxMessages || ageS > maxSeconds,
        message: `event partition ${p}: ${lag.messages} message(s) not yet processed, the oldest waiting ${ageS} s (bound: ${maxMessages} messages or ${maxSeconds} s)`,
        details: {
          partition: p,
          messages: lag.messages,
          oldest_age_seconds: ageS,
          max_messages: maxMessages,
          max_seconds: maxSeconds,
        },
      });
    }
    return out;
  }
}
