import { type Kysely } from 'kysely';
import { type Database } from '../../shared/db/database.ts';
import { pageWithTotal } from '../../shared/db/snapshot.ts';
import { type Environment } from '../../shared/domain/deploy-verification.ts';
import type { IssueStatus } from '../../shared/domain/issue-status.ts';

/** Which issues: a site's environment, optionally one status, a window of the list. */
export interface IssueFilter {
  site_id: string;
  environment: Environment;
  status?: IssueStatus;
  limit: number;
  offset: number;
}

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
export async function listIssues(db: Kysely<Database>, q: IssueFilter) {
  return pageWithTotal(
    db,
    (trx) =>
      trx
        .selectFrom('ux_issues')
        .where('site_id', '=', q.site_id)
        .where('environment', '=', q.environment)
        .$if(q.status !== undefined, (qb) => qb.where('status', '=', q.status!)),
    (base) =>
      base
        .select(LIST_COLUMNS)
        .orderBy('severity', 'desc')
        .orderBy('affected_sessions', 'desc')
        .orderBy('signal_count', 'desc')
        .orderBy('id')
        .limit(q.limit)
        .offset(q.offset)
        .execute(),
  );
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
