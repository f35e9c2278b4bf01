import type { Kysely } from 'kysely';
import type { Database } from '../../shared/db/database.ts';
import { destinationKey, recordAndClaim, type ClaimedDelivery } from '../store/deliveries.store.ts';
import type { Logger } from '../../shared/logger.ts';
import { isSucceeded, OutcomeRecorder, successRecord, type Finished } from './outcome-recorder.ts';

/** A claimed delivery waiting in the local queue, with its claim's time and number. */
export interface Claimed {
  d: ClaimedDelivery;
  claimedAt: number;
  claim: number;
}

/** Outcomes one cycle writes at most (the statement's arrays stay small). */
const MAX_PER_WRITE = 500;
/**
 * Outcomes wait for more to join them, unless FULL_GROUP are already waiting: each statement's fixed cost (planning,
 * a WAL flush at commit, the round trip, waking the backend) is then shared by tens of deliveries. While deliveries
 * are queued locally the next claim is near (at half a claim) and carries them, so they wait up to
 * RECORD_LINGER_QUEUED_MS for it; with the queue empty (the last sends of a burst) RECORD_LINGER_MS. The receiver
 * already has its request; only the record waits.
 */
const RECORD_LINGER_MS = 20;
const RECORD_LINGER_QUEUED_MS = 100;
/** A claim's worth of outcomes: written without lingering. */
const FULL_GROUP = 64;
/** A sender waits for the cycle once this many outcomes are unrecorded (the database is slower than the sends). */
const MAX_UNRECORDED = 256;

export interface DeliveryCycleOptions {
  db: Kysely<Database>;
  log: Logger;
  now: () => number;
  random: () => number;
  /** Deliveries one claim takes at most; another is taken when the local queue is down to half of it. */
  claimBatch: number;
  /** Deliveries to one destination held at once (claimed or being sent): a receiver that never answers holds no more. */
  perDestination: number;
  leaseMs: number;
  stopping: () => boolean;
  /** The poll interval's wait (after a failed claim). */
  idle: () => Promise<void>;
  /** wake() calls so far: a wake during a claim that found nothing means another claim, not an idle wait. */
  wakes: () => number;
  /** Called once a group's failures are written, before any later claim takes its number. */
  onFailuresWritten: (group: readonly Finished[]) => void;
  stats: { claims: number; recordWrites: number; statements: number; recorded: number };
}

/**
 * The dispatcher's database side, one cycle at a time: each cycle writes the outcomes finished since the last one
 * and claims due deliveries into the local queue, successes and the claim in ONE statement (recordAndClaim);
 * failures and deliveries given up take their own transaction first (they lock endpoints to count streaks). A cycle
 * runs when the queue is down to half a claim, or when outcomes have waited RECORD_LINGER_MS (or FULL_GROUP are
 * waiting). Until its cycle commits, a finished attempt is like one in flight: a dispatcher killed then leaves it
 * claimed, and it is sent again (same webhook-id) when the lease ends.
 */
export class DeliveryCycle {
  readonly queue: Claimed[] = [];
  /** Claims started so far; a queued delivery carries its claim's number. */
  claimSeq = 0;
  private readonly o: DeliveryCycleOptions;
  private readonly recorder: OutcomeRecorder;
  private pending: Finished[] = [];
  private running: Promise<void> | undefined;
  private claimWanted = false;
  private wakesAtClaim = 0;
  /** Ends the current linger early (a claim is wanted, or the group is full). */
  private endLinger: (() => void) | undefined;
  /** Senders with an empty queue, waiting for the next claim. */
  private waiters: (() => void)[] = [];
  /** Deliveries held per destination (queued here or being sent), until their outcome is added or they are let go. */
  private readonly held = new Map<string, number>();

  constructor(o: DeliveryCycleOptions) {
    this.o = o;
    this.recorder = new OutcomeRecorder({ db: o.db, log: o.log, random: o.random });
  }

  /** The next claimed delivery; with an empty queue, after the cycle that claims more (undefined: nothing was due). */
  async take(): Promise<Claimed | undefined> {
    if (this.queue.length < this.o.claimBatch / 2) this.wantClaim();
    if (this.queue.length === 0 && !this.o.stopping()) await new Promise<void>((resolve) => this.waiters.push(resolve));
    return this.queue.shift();
  }

  /** Whether wake() was called since the last claim started (then a claim that found nothing is worth repeating). */
  wokenSinceClaim(): boolean {
    return this.o.wakes() !== this.wakesAtClaim;
  }

  /** A claimed delivery taken from the queue will not be sent here (its claim is let go): its destination is freed. */
  letGo(d: ClaimedDelivery): void {
    const key = destinationKey(d);
    const n = (this.held.get(key) ?? 0) - 1;
    if (n > 0) this.held.set(key, n);
    else this.held.delete(key);
  }

  /** Queues one outcome; waits only while too many are unrecorded. */
  async add(f: Finished): Promise<void> {
    this.letGo(f.d);
    this.pending.push(f);
    if (this.pending.length >= FULL_GROUP) this.endLinger?.();
    const run = this.run();
    if (this.pending.length >= MAX_UNRECORDED) await run;
  }

  /** Writes every outcome still queued, claiming nothing more (the dispatcher is stopping). */
  async drain(): Promise<void> {
    this.endLinger?.();
    this.releaseWaiters();
    while (this.running || this.pending.length > 0) await this.run();
  }

  private wantClaim(): void {
    this.claimWanted = true;
    this.endLinger?.();
    void this.run();
  }

  private run(): Promise<void> {
    if (!this.running) this.running = this.cycles();
    return this.running;
  }

  private async cycles(): Promise<void> {
    await null; // run() stores this run before its body starts, so the reset below always comes after
    try {
      while (this.pending.length > 0 || (this.claimWanted && !this.o.stopping())) {
        if (!this.claimWanted && this.pending.length < FULL_GROUP && !this.o.stopping()) await this.linger();
        await this.cycle();
      }
    } finally {
      this.running = undefined;
      this.releaseWaiters();
    }
  }

  private async cycle(): Promise<void> {
    const group = this.pending.splice(0, MAX_PER_WRITE);
    const now = new Date(this.o.now());
    const succeeded = group.filter(isSucceeded);
    if (group.length > 0) this.o.stats.recordWrites++;
    if (succeeded.length < group.length) {
      // NOTE: failures first: a success of the same group then clears the endpoint's streak (a streak is only ever
      // under-counted, never made to disable an endpoint that has just answered).
      try {
        this.o.stats.statements += await this.recorder.writeUnsuccessful(group, now);
      } catch (err) {
        this.o.log.warn(
          { err, deliveries: group.length - succeeded.length },
          'recording failed delivery attempts failed; their claims come due again after the lease',
        );
      }
      // Before the claim below takes its number: every claim from here on reads the endpoints this write disabled.
      this.o.onFailuresWritten(group);
    }
    const limit = this.claimWanted && !this.o.stopping() ? this.o.claimBatch - this.queue.length : 0;
    this.claimWanted = false;
    if (succeeded.length === 0 && limit <= 0) return void (this.o.stats.recorded += group.length);
    const claim = limit > 0 ? ++this.claimSeq : 0;
    if (limit > 0) this.wakesAtClaim = this.o.wakes();
    try {
      const { written, claimed } = await recordAndClaim(
        this.o.db,
        succeeded.map(successRecord),
        now,
        limit,
        this.o.leaseMs,
        { perDestination: this.o.perDestination, busy: [...this.held].map(([key, held]) => ({ key, held })) },
      );
      this.o.stats.statements++;
      if (succeeded.length > 0) this.recorder.countSucceeded(succeeded, written);
      if (claimed.length > 0) this.o.stats.claims++;
      const claimedAt = now.getTime();
      for (const d of claimed) {
        this.queue.push({ d, claimedAt, claim });
        const key = destinationKey(d);
        this.held.set(key, (this.held.get(key) ?? 0) + 1);
      }
    } catch (err) {
      this.o.log.warn(
        { err, deliveries: succeeded.length, claiming: limit > 0 },
        'recording delivery attempts or claiming due deliveries failed; unrecorded claims come due again after the lease, claims are retried after the poll interval',
      );
      if (limit > 0) await this.o.idle();
    }
    this.o.stats.recorded += group.length;
    if (limit > 0) this.releaseWaiters();
  }

  private releaseWaiters(): void {
    for (const w of this.waiters.splice(0)) w();
  }

  private linger(): Promise<void> {
    return new Promise<void>((resolve) => {
      const end = () => {
        clearTimeout(t);
        this.endLinger = undefined;
        resolve();
      };
      const t = setTimeout(end, this.queue.length > 0 ? RECORD_LINGER_QUEUED_MS : RECORD_LINGER_MS);
      this.endLinger = end;
    });
  }
}
