import type { Transaction } from 'kysely';
import type { Database } from '../../shared/db/database.ts';
import { announceOutboxRows } from '../../shared/notify/outbox.ts';
import type { ManageDeps } from './deps.ts';

/**
 * Runs a write in one transaction; when it queued outbox rows (`queued`), tells the relay once the transaction
 * committed (never for a change that rolled back). Answers the write's `answer`.
 */
export async function writeWithOutbox<T>(
  deps: Pick<ManageDeps, 'db' | 'bus' | 'topology'>,
  write: (trx: Transaction<Database>) => Promise<{ answer: T; queued: boolean }>,
): Promise<T> {
  const { answer, queued } = await deps.db.transaction().execute(write);
  if (queued) announceOutboxRows(deps.bus, deps.topology.outboxQueuedSubject);
  return answer;
}
