import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../../shared/db/database.ts';
import type { RunBulkTransaction } from '../../shared/db/bulk.ts';
import { AppError } from '../../shared/errors.ts';

/**
 * A batch transaction found its partition claimed by a newer owner: this process lost the lease (it was paused or cut
 * off past the lease TTL) and must not write. Retriable, so the batch loop never dead-letters the messages for it:
 * the partition's loop is stopped and they go back to the stream for the new owner.
 */
export class PartitionFencedError extends AppError {
  readonly partition: number;
  readonly epoch: number;
  readonly current: number | null;
  constructor(partition: number, epoch: number, current: number | null) {
    super(
      'partition_fenced',
      503,
      `partition ${partition}: this processor's lease epoch ${epoch} is older than the database's (${current ?? 'none'}); a newer owner took it`,
      { retriable: true },
    );
    this.partition = partition;
    this.epoch = epoch;
    this.current = current;
  }
}

/**
 * Raises the partition's epoch for a new owner and returns it. Waits for the row lock a batch transaction of the
 * previous owner holds (see fenceBatch), so that batch either committed before the claim or is refused after it:
 * the new owner rebuilds its windows from a database no stale write changes afterwards.
 */
export async function claimPartition(db: Kysely<Database>, partition: number, owner: string): Promise<number> {
  const row = await db
    .insertInto('partition_leases')
    .values({ partition, epoch: 1, owner })
    .onConflict((oc) =>
      oc.column('partition').doUpdateSet((eb) => ({
        epoch: eb('partition_leases.epoch', '+', 1),
        owner: eb.ref('excluded.owner'),
        claimed_at: new Date(),
      })),
    )
    .returning('epoch')
    .executeTakeFirstOrThrow();
  return Number(row.epoch);
}

/**
 * The first statement of every batch transaction of a leased partition: reads the partition's epoch FOR SHARE (held
 * to the commit, so a claim waits for this batch) and throws PartitionFencedError unless it is still `epoch`.
 */
export async function fenceBatch(trx: Transaction<Database>, partition: number, epoch: number): Promise<void> {
  const row = await trx
    .selectFrom('partition_leases')
    .select('epoch')
    .where('partition', '=', partition)
    .forShare()
    .executeTakeFirst();
  const current = row ? Number(row.epoch) : null;
  if (current !== epoch) throw new PartitionFencedError(partition, epoch, current);
}

/**
 * `bulk` whose every transaction is fenced on `partition` at `epoch`. `onFenced` runs synchronously when a
 * transaction is refused, before the error reaches the batch loop: it stops the partition's loop, so the loop hands
 * the batch back to the stream instead of retrying it.
 */
export function fencedBulk(
  bulk: RunBulkTransaction,
  partition: number,
  epoch: number,
  onFenced: (err: PartitionFencedError) => void,
): RunBulkTransaction {
  return async (fn) => {
    try {
      return await bulk(async (tx) => {
        await fenceBatch(tx.trx, partition, epoch);
        return fn(tx);
      });
    } catch (err) {
      if (err instanceof PartitionFencedError) onFenced(err);
      throw err;
    }
  };
}
