import type { Kysely } from 'kysely';
import type { Database } from '../../shared/db/database.ts';
import type { PartitionHealth } from '../../shared/bus/batch-loop.ts';
import { openDegradation, recoverDegradation } from '../../shared/db/queries/degradation.queries.ts';
import type { Logger } from '../../shared/logger.ts';

/**
 * Records a consumer's pauses as `partition_paused` degradation events (subject: the consumer), so an operator sees
 * in /v1/query/degradation why a partition stopped and when it went again. Best effort: the pause itself never
 * waits on this write, and a database that rejects it is the fault already being reported in the log.
 */
export function recordPartitionHealth(
  db: Kysely<Database>,
  log: Logger,
  subject: string,
  now: () => number = Date.now,
): (h: PartitionHealth) => void {
  let last = Promise.resolve();
  return (h) => {
    // Chained: a resume never overtakes the pause it ends.
    last = last
      .then(async () => {
        const at = new Date(now());
        if (h.state === 'paused')
          await openDegradation(db, { orgId: null, kind: 'partition_paused', subject, message: h.reason, at });
        else await recoverDegradation(db, 'partition_paused', subject, at);
      })
      .catch((err) => log.warn({ err, subject }, 'could not record the partition pause'));
  };
}
