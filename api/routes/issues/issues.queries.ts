import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import { type Database } from '../../../shared/db/database.ts';
import type { UxIssueTable } from '../../../shared/db/tables/issues.table.ts';
import { inOneSnapshot } from '../../../shared/db/snapshot.ts';
import { type IssueListQuery } from './issues.schema.ts';
import { type Environment } from '../../../shared/domain/deploy-verification.ts';

const LIST_COLUMNS = [
  'id',
  'site_id',
  'title',
  'page',
  'selector',
  'signal_type',
  'signal_count',
  'affected_sessions',
  'severity',
  'status',
  'note',
  'assigned_to',
  'frozen',
  'label',
  'created_at',
  'updated_at',
  'last_signal_at',
  'merged_into',
  'resolved_at',
  'signalling_again_at',
] as const;

export type IssueRow = Awaited<ReturnType<typeof listIssues>>['rows'][number];

/** Issues of a site, most severe first, with the total matching the filter (both from one snapshot). */
export async function listIssues(db: Kysely<Database>, q: IssueListQuery) {
  return inOneSnapshot(db, async (trx) => {
    const base = trx
      .selectFrom('ux_issues')
      .where('site_id', '=', q.site_id)
      .where('environment', '=', q.environment)
      .$if(q.status !== undefined, (qb) => qb.where('status', '=', q.status!));
    const rows = await base
      .select(LIST_COLUMNS)
      .orderBy('severity', 'desc')
      .orderBy('affected_sessions', 'desc')
      .orderBy('signal_count', 'desc')
      .orderBy('id')
      .limit(q.limit)
      .offset(q.offset)
      .execute();
    const total = await base.select(sql<number>`count(*)::int`.as('n')).executeTakeFirstOrThrow();
    return { rows, total: total.n };
  });
}

/** One issue of a site and environment with its hypothesis, evidence sessions (most signals first) and history, or undefined. */
export async function findIssue(db: Kysely<Database>, siteId: string, environment: Environment, id: string) {
  const issue = await db
    .selectFrom('ux_issues')
    .select([...LIST_COLUMNS, 'hypothesis', 'first_signal_at', 'evidence', 'introduced_by_deploy'])
    .where('site_id', '=', siteId)
    .where('environment', '=', environment)
    .where('id', '=', id)
    .executeTakeFirst();
  if (!issue) return undefined;
  const updates = await db
    .selectFrom('issue_updates')
    .select(['source', 'kind', 'changes', 'reason', 'created_at'])
    .where('issue_id', '=', id)
    .orderBy('id', 'desc')
    .limit(50)
    .execute();
  return { issue, sessions: issue.evidence, updates };
}

/** Issues of one page of an environment in `statuses`, most severe first (the list's order), at most `limit`. */
export async function listIssuesOfPage(
  db: Kysely<Database>,
  siteId: string,
  environment: Environment,
  page: string,
  statuses: readonly string[],
  limit: number,
): Promise<IssueRow[]> {
  return db
    .selectFrom('ux_issues')
    .select(LIST_COLUMNS)
    .where('site_id', '=', siteId)
    .where('environment', '=', environment)
    .where('page', '=', page)
    .where('status', 'in', [...statuses])
    .orderBy('severity', 'desc')
    .orderBy('affected_sessions', 'desc')
    .orderBy('id')
    .limit(limit)
    .execute();
}

/** The whole row, as a write reads and returns it. */
export type IssueRecord = Selectable<UxIssueTable>;

/** An issue of a live site with its org, locked for the caller's transaction. */
export async function findIssueForUpdate(
  trx: Transaction<Database>,
  id: string,
): Promise<(IssueRecord & { org_id: string }) | undefined> {
  return trx
    .selectFrom('ux_issues as i')
    .innerJoin('sites as s', 's.id', 'i.site_id')
    .selectAll('i')
    .select('s.org_id')
    .where('i.id', '=', id)
    .where('s.deleted_at', 'is', null)
    .forUpdate('i')
    .executeTakeFirst();
}

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

/** One line of the issue's history, beside the engine's and the triage's (source `api`). */
export async function insertApiIssueUpdate(
  trx: Transaction<Database>,
  issueId: string,
  changes: Record<string, unknown>,
  actor: string,
): Promise<void> {
  await trx
    .insertInto('issue_updates')
    .values({
      issue_id: issueId,
      source: 'api',
      kind: 'manual',
      changes: JSON.stringify(changes),
      reason: `by ${actor}`,
    })
    .execute();
}
