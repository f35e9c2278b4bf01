import type { Kysely } from 'kysely';
import { randomUUID } from 'node:crypto';
import type { Database } from '../../shared/db/database.ts';
import type { Bus } from '../../shared/bus/bus.ts';
import type { Topology } from '../../shared/contracts/subjects.ts';
import { encode } from '../../shared/contracts/codec.ts';
import { isRetriable } from '../../shared/errors.ts';
import type { Logger } from '../../shared/logger.ts';
import {
  acquireOutboxLease,
  clearOutboxLease,
  loadPendingOutbox,
  markOutboxFailed,
  markOutboxPublished,
  pruneOutbox,
  releaseOutboxLease,
  type PendingOutboxRow,
} from '../store/outbox.store.ts';

/** Idle poll interval; a commit that queued rows wakes the relay at once (in process, or by broadcast). */
const POLL_MS = 1000;
/** The relay lease outlives a round; a relay that died is replaced after it. */
const LEASE_MS = 30_000;
/** A round stops publishing after this long, well inside the lease, and renews it in the next round. */
const ROUND_BUDGET_MS = 10_000;
const ROUND_ROWS = 500;
/** A row that keeps failing on its own (not an unavailable bus) is given up after this many attempts. */
export const OUTBOX_MAX_ATTEMPTS = 10;
/** Retry delay after a failed publish: 1 s doubling to 5 min. */
const retryDelayMs = (attempt: number) => Math.min(300_000, 1000 * 2 ** Math.max(0, attempt));

/**
 * Moves queued rows from the outbox table to the stream (at least once; the stream dedupes on the message id).
 * - one relay publishes at a time (a lease row), so rows of one aggregate go out in the order they were queued;
 * - no transaction is held while publishing: rows are read, published one by one, then marked in short statements;
 * - a failed publish is logged, retried with backoff, and holds back only the later rows of its own aggregate; an
 *   unavailable bus is retried without limit, a row that fails on its own is given up after OUTBOX_MAX_ATTEMPTS.
 * Runs until stopped.
 */
export class OutboxRelay {
  private readonly db: Kysely<Database>;
  private readonly bus: Bus;
  private readonly topology: Topology;
  private readonly log: Logger;
  private readonly holder = randomUUID();
  private readonly now: () => number;
  private stopped = false;
  private wakeUp: (() => void) | undefined;
  private loop: Promise<void> | undefined;
  private rounds = 0;
  private unlisten: (() => void) | undefined;
  private woken = false;
  private readonly sole: boolean;

  /**
   * `sole`: no other relay can be running on this database (the embedded one, which one process opens), so a lease
   * found at start is an earlier life's, killed before it gave the lease up: taken over at once instead of waited
   * out (LEASE_MS). Queued webhooks and alerts were 30 s late after every crash of `friction start`.
   */
  constructor(opts: {
    db: Kysely<Database>;
    bus: Bus;
    topology: Topology;
    log: Logger;
    now?: () => number;
    sole?: boolean;
  }) {
    this.db = opts.db;
    this.bus = opts.bus;
    this.topology = opts.topology;
    this.log = opts.log;
    this.now = opts.now ?? Date.now;
    this.sole = opts.sole ?? false;
  }

  /**
   * Relays until stopped. Other processes (the API) announce the rows they committed on `outboxQueuedSubject`, so
   * the relay wakes at once; the poll covers a lost announcement.
   */
  start(): void {
    this.unlisten = this.bus.listen(this.topology.outboxQueuedSubject, () => this.wake());
    this.loop = this.run();
  }

  /** Called after a commit that queued rows. A wake during a round makes the loop go round again at once. */
  wake(): void {
    this.woken = true;
    this.wakeUp?.();
  }

  /** One round: publishes what is due, in order per aggregate. Returns how many rows were published. */
  async round(): Promise<number> {
    if (!(await acquireOutboxLease(this.db, this.holder, LEASE_MS))) return 0;
    const rows = await loadPendingOutbox(this.db, ROUND_ROWS);
    const started = this.now();
    const held = new Set<string>();
    const published: number[] = [];
    try {
      for (const row of rows) {
        if (this.stopped || this.now() - started > ROUND_BUDGET_MS) break;
        const aggregate = row.aggregate ?? `row:${row.id}`;
        if (held.has(aggregate)) continue;
        if (row.nextAttemptAt !== null && row.nextAttemptAt > this.now()) {
          held.add(aggregate); // an earlier row of this aggregate waits for its retry: so do the later ones
          continue;
        }
        try {
          await this.bus.publish(this.subjectOf(row), this.bodyOf(row), row.msgId);
          published.push(row.id);
        } catch (err) {
          held.add(aggregate);
          await this.failed(row, err);
        }
      }
    } finally {
      await markOutboxPublished(this.db, published);
    }
    return published.length;
  }

  private subjectOf(row: PendingOutboxRow): string {
    return row.stream === 'replay' ? row.kind : this.topology.notifySubject(row.kind);
  }

  private bodyOf(row: PendingOutboxRow): Uint8Array {
    // notification_id lets the dispatcher derive a notification's stable public id (webhook-id). A replayed dead
    // letter goes out exactly as it was stored.
    if (row.stream === 'replay') return new TextEncoder().encode(row.raw ?? '');
    return encode({ ...row.payload, notification_id: row.msgId });
  }

  private async failed(row: PendingOutboxRow, err: unknown): Promise<void> {
    const message = (err as Error)?.message ?? String(err);
    const counts = !isRetriable(err);
    const attempts = row.attempts + (counts ? 1 : 0);
    const giveUp = counts && attempts >= OUTBOX_MAX_ATTEMPTS;
    const retryInMs = retryDelayMs(counts ? attempts : 0);
    await markOutboxFailed(this.db, row.id, { error: message, retryInMs, counts, giveUp });
    const fields = {
      outboxId: row.id,
      kind: row.kind,
      msgId: row.msgId,
      aggregate: row.aggregate,
      attempts,
      err,
    };
    if (giveUp) this.log.error(fields, 'outbox row given up after repeated publish failures');
    else this.log.warn({ ...fields, retryInMs }, 'outbox publish failed; will retry');
  }

  private async run(): Promise<void> {
    if (this.sole)
      await clearOutboxLease(this.db).catch((err: unknown) =>
        this.log.warn({ err }, 'outbox relay: the lease left by an earlier process could not be cleared'),
      );
    while (!this.stopped) {
      let moved = 0;
      this.woken = false;
      try {
        moved = await this.round();
        if (++this.rounds % 3600 === 0) await pruneOutbox(this.db, 7);
      } catch (err) {
        this.log.warn({ err }, 'outbox relay round failed');
      }
      if (moved > 0 || this.woken) continue;
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, POLL_MS);
        this.wakeUp = () => {
          clearTimeout(t);
          resolve();
        };
      });
      this.wakeUp = undefined;
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.unlisten?.();
    this.wakeUp?.();
    await this.loop;
    await releaseOutboxLease(this.db, this.holder).catch(() => {});
  }
}
