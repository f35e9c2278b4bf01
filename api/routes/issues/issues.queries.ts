import { type Selectable, type Transaction } from 'kysely';
import { type Database } from '../../../shared/db/database.ts';
import type { UxIssueTable } from '../../../shared/db/tables/issues.table.ts';

/** The whole row, as a write reads and returns it. */
export type IssueRecord = Selectable<UxIssueTable>;

export async function updateIssueFields(
  trx: Transaction<Database>,
  id: string,
  set: { status?: string; note?: string | null; assigned_to?: string | null; frozen?: boolean; severity?: number },
  now: Date,
): Promise<IssueRecord> {
  return (
    trx
      .updateTable('ux_issues')
      // resolved_at marks when an issue closed: the engine reopens it as regressed only on activity after that.
      .set({
        ...set,
        updated_at: now,
        ...(set.status === 'resolved' || set.status === 'verified' ? { resolved_at: now } : {}),
      })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow()
  );
}
