import type { Kysely } from 'kysely';
import type { Database } from '../../shared/db/database.ts';
import type { Logger } from '../../shared/logger.ts';
import { planLeases } from './fair-share.ts';
import { claimPartition, type PartitionFencedError } from './fence.ts';
import type { LeaseBucket } from './lease-bucket.ts';
import { partitionEpoch, partitionLeaseEvents, partitionsOwned } from './metrics.ts';

/** A partition this processor consumes, once started. */
export interface PartitionRun {
  /** Stops consuming at once (the loop's signal aborts now); resolves when the loop ended and its state was dropped. */
  stop(): Promise<void>;
  /** Rejects if the loop dies (the process then exits and is restarted). */
  done: Promise<void>;
}

/**
 * Starts consuming a partition whose lease and epoch this processor now holds: rebuilds its state from the database,
 * then runs its loop with every batch fenced on `epoch`. `onFenced` is called when the database refuses a batch.
 */
export type StartPartition = (
  partition: number,
  epoch: number,
  onFenced: (err: PartitionFencedError) => void,
) => Promise<PartitionRun>;

interface Held {
  revision: number;
  /** When the last successful renewal was sent (monotonic ms): the server's expiry is at least a TTL after it. */
  renewedAt: number;
  epoch?: number;
  run?: PartitionRun;
  state: 'starting' | 'running' | 'releasing';
}

export interface PartitionLeasesOptions {
  bucket: LeaseBucket;
  db: Kysely<Database>;
  me: string;
  total: number;
  log: Logger;
  start: StartPartition;
}

/** A lease the holder could not renew for this share of the TTL is given up: the server may expire it any time now. */
const SAFE_SHARE = 0.8;

/**
 * Holds this processor's partition leases: heartbeats, renews every lease with compare-and-set, takes or gives up
 * partitions for a fair share (planLeases), and stops a partition's loop the moment its lease is lost. A partition is
 * consumed only between its claim (a new epoch in the database) and its release.
 */
export class PartitionLeases {
  private readonly o: PartitionLeasesOptions;
  private readonly held = new Map<number, Held>();
  private readonly pending = new Set<Promise<void>>();
  private stopped = false;
  private timer: NodeJS.Timeout | undefined;
  private watchdog: NodeJS.Timeout | undefined;
  private beating: Promise<void> | undefined;
  private failLoop!: (err: unknown) => void;
  private ended!: () => void;
  /** Resolves once stopped; rejects when a partition's loop dies. */
  readonly done: Promise<void>;

  constructor(o: PartitionLeasesOptions) {
    this.o = o;
    this.done = new Promise<void>((resolve, reject) => {
      this.ended = resolve;
      this.failLoop = reject;
    });
    this.done.catch(() => {});
  }

  private get ttlMs(): number {
    return this.o.bucket.ttlMs;
  }

  /** Partitions this processor consumes or is about to (rebuilding). */
  owned(): number[] {
    return [...this.held.entries()]
      .filter(([, h]) => h.state !== 'releasing')
      .map(([p]) => p)
      .sort((a, b) => a - b);
  }

  async start(): Promise<void> {
    await this.o.bucket.checkPartitionCount(this.o.total);
    await this.beat();
    // What the first beat acquired is rebuilt and consuming before start returns (as with a static set).
    await Promise.all(this.pending);
    const every = Math.max(100, Math.floor(this.ttlMs / 4));
    const next = () => {
      this.timer = setTimeout(() => {
        this.beating = this.beat().finally(() => {
          if (!this.stopped) next();
        });
      }, every);
    };
    next();
    this.watchdog = setInterval(() => this.expireUnrenewed(), Math.max(50, Math.floor(this.ttlMs / 10)));
  }

  /** Stops every partition, gives the leases up for the other processors, and leaves. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    clearInterval(this.watchdog);
    await this.beating;
    await Promise.all([...this.held.keys()].map((p) => this.release(p, 'shutdown')));
    await Promise.all(this.pending);
    await this.o.bucket.leave(this.o.me).catch(() => {});
    this.publishGauges();
    this.ended();
  }

  /** One heartbeat: membership, renewals, then the fair-share plan. Failures wait for the next beat. */
  private async beat(): Promise<void> {
    const { bucket, me, log } = this.o;
    try {
      await bucket.heartbeat(me);
      await Promise.all(
        [...this.held.entries()].map(async ([p, h]) => {
          const sent = performance.now();
          const revision = await bucket.renew(p, me, h.revision);
          if (this.held.get(p) !== h) return;
          if (revision === null) return this.lose(p, 'lost', 'the lease expired or another processor holds it');
          h.revision = revision;
          h.renewedAt = sent;
        }),
      );
      if (this.stopped) return;
      const view = await bucket.view();
      const plan = planLeases({ total: this.o.total, me, members: view.members, owners: view.owners });
      for (const p of plan.release) if (this.held.get(p)?.state === 'running') this.track(this.release(p, 'rebalance'));
      for (const p of plan.acquire) {
        const sent = performance.now();
        const revision = await bucket.acquire(p, me);
        if (revision === null) continue; // another processor's compare-and-set won
        const h: Held = { revision, renewedAt: sent, state: 'starting' };
        this.held.set(p, h);
        partitionLeaseEvents.inc({ event: 'acquired' });
        log.info({ partition: p, processor: me, target: plan.target }, 'partition lease acquired');
        this.track(this.begin(p, h));
      }
    } catch (err) {
      log.warn({ err }, 'partition lease heartbeat failed; retrying');
    }
    this.publishGauges();
  }

  /** Claims a new epoch, rebuilds and starts consuming; gives the lease back if that fails. */
  private async begin(p: number, h: Held): Promise<void> {
    const { db, me, log } = this.o;
    try {
      h.epoch = await claimPartition(db, p, me);
      if (this.held.get(p) !== h) return; // lost while the claim waited
      const run = await this.o.start(p, h.epoch, (err) => this.lose(p, 'fenced', err.message));
      if (this.held.get(p) !== h || h.state !== 'starting') {
        await run.stop();
        return;
      }
      h.run = run;
      h.state = 'running';
      run.done.catch((err: unknown) => this.failLoop(err));
      log.info({ partition: p, epoch: h.epoch, processor: me }, 'partition consuming');
    } catch (err) {
      log.error({ err, partition: p }, 'could not start a leased partition; releasing it');
      if (this.held.get(p) === h) await this.release(p, 'start failed');
    }
    this.publishGauges();
  }

  /** Gives up a held partition: stops its loop (in-flight batch committed or handed back), then deletes the lease. */
  private async release(p: number, why: string): Promise<void> {
    const h = this.held.get(p);
    if (!h || h.state === 'releasing') return;
    h.state = 'releasing';
    await h.run?.stop();
    if (this.held.get(p) !== h) return; // lost meanwhile
    this.held.delete(p);
    await this.o.bucket.release(p, h.revision).catch(() => {});
    partitionLeaseEvents.inc({ event: 'released' });
    this.o.log.info({ partition: p, processor: this.o.me, why }, 'partition lease released');
    this.publishGauges();
  }

  /** The lease is gone (or the database fenced us off): stop consuming now, without waiting for anything. */
  private lose(p: number, event: 'lost' | 'fenced', why: string): void {
    const h = this.held.get(p);
    if (!h) return;
    this.held.delete(p);
    partitionLeaseEvents.inc({ event });
    this.o.log.warn({ partition: p, processor: this.o.me, epoch: h.epoch, why }, `partition lease ${event}`);
    if (h.run) this.track(h.run.stop());
    // Fenced while the key may still be ours: give it back so the fair share is recomputed.
    if (event === 'fenced') this.track(this.o.bucket.release(p, h.revision).catch(() => {}));
    this.publishGauges();
  }

  /** A lease not renewed for most of the TTL (NATS unreachable, the process paused) may already be someone else's. */
  private expireUnrenewed(): void {
    const limit = this.ttlMs * SAFE_SHARE;
    const now = performance.now();
    for (const [p, h] of this.held)
      if (now - h.renewedAt > limit) this.lose(p, 'lost', `not renewed for ${Math.round(now - h.renewedAt)} ms`);
  }

  private track(p: Promise<void>): void {
    const t = p.catch((err: unknown) => this.o.log.warn({ err }, 'partition lease change failed'));
    this.pending.add(t);
    void t.finally(() => this.pending.delete(t));
  }

  private publishGauges(): void {
    const processor = this.o.me;
    partitionsOwned.set({ processor }, this.owned().length);
    partitionEpoch.reset();
    for (const [p, h] of this.held)
      if (h.epoch !== undefined) partitionEpoch.set({ processor, partition: String(p) }, h.epoch);
  }
}
