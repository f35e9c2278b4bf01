import type { Kysely } from 'kysely';
import type { Database } from '../../shared/db/database.ts';
import type { Bus } from '../../shared/bus/bus.ts';
import type { Topology } from '../../shared/contracts/subjects.ts';
import { encode } from '../../shared/contracts/codec.ts';
import type { Logger } from '../../shared/logger.ts';
import { pruneOutbox, relayOutbox } from '../store/outbox.store.ts';

/** Idle poll interval; a commit that queued notifications wakes the relay at once. */
const POLL_MS = 1000;

/**
 * Moves queued notifications from the outbox table to the NOTIFY stream (at least once; the stream dedupes on
 * the notification id). Runs until stopped.
 */
export class OutboxRelay {
  private readonly db: Kysely<Database>;
  private readonly bus: Bus;
  private readonly topology: Topology;
  private readonly log: Logger;
  private stopped = false;
  private wakeUp: (() => void) | undefined;
  private loop: Promise<void> | undefined;
  private rounds = 0;

  constructor(opts: { db: Kysely<Database>; bus: Bus; topology: Topology; log: Logger }) {
    this.db = opts.db;
    this.bus = opts.bus;
    this.topology = opts.topology;
    this.log = opts.log;
  }

  start(): void {
    this.loop = this.run();
  }

  /** Called after a commit that queued notifications. */
  wake(): void {
    this.wakeUp?.();
  }

  private async run(): Promise<void> {
    while (!this.stopped) {
      let moved = 0;
      try {
        moved = await relayOutbox(this.db, async (kind, msgId, payload) => {
          // notification_id: the dispatcher derives the event's stable public id (webhook-id) from it.
          await this.bus.publish(this.topology.notifySubject(kind), encode({ ...payload, notification_id: msgId }), msgId);
        });
        if (++this.rounds % 3600 === 0) await pruneOutbox(this.db, 7);
      } catch (err) {
        this.log.warn({ err: (err as Error).message }, 'outbox relay round failed');
      }
      if (moved > 0) continue;
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
    this.wakeUp?.();
    await this.loop;
  }
}
