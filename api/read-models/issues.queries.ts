import { sql, type Kysely, type Selectable, type SelectQueryBuilder } from 'kysely';
import { type Database } from '../../shared/db/database.ts';
import { inScope, onPage, type PageScope } from '../../shared/db/scope.ts';
import { PREPARED } from '../../shared/db/prepared-reads.ts';
import { isoMs, round1Real } from '../../shared/db/sql.ts';
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

/** The order of issue lists other than the issues route's: most severe first, then most sessions affected. */
export const mostSevereFirst = <O>(q: SelectQueryBuilder<Database, 'ux_issues', O>) =>
  q.orderBy('severity', 'desc').orderBy('affected_sessions', 'desc').orderBy('id');

/** An issue's list columns as the driver reads them (Dates). */
export type IssueRow = Pick<Selectable<Database['ux_issues']>, (typeof LIST_COLUMNS)[number]>;

/**
 * Issues of a site, most severe first (then most sessions affected, most signals), with the total matching the
 * filter. One statement, kept prepared (PREPARED): one snapshot, so the page and its total agree without a
 * transaction's three more round trips, and the page comes as one JSON array the database builds (times as ISO text,
 * cut to the millisecond as the driver's Dates are) that JSON.parse reads natively. The order is read from
 * `ux_issues_issue_list_idx` (migration 0320).
 */
export async function listIssues(
  db: Kysely<Database>,
  q: IssueFilter,
): Promise<{ rows: IssueFields[]; total: number }> {
  const filtered = db
    .selectFrom('ux_issues')
    .where(inScope(q))
    .$if(q.status !== undefined, (qb) => qb.where('status', '=', q.status!));
  const page = filtered
    .select(LIST_COLUMNS.filter(notATime))
    .select((eb) => LIST_TIMES.map((c) => isoMs<null>(eb.ref(c)).as(c)))
    .orderBy('severity', 'desc')
    .orderBy('affected_sessions', 'desc')
    .orderBy('signal_count', 'desc')
    .orderBy('id')
    .limit(q.limit)
    .offset(q.offset);
  const { rows } = await sql<{ total: number; issues: string | null }>`${PREPARED}
    select (${filtered.select(sql<number>`count(*)::int`.as('n'))}) as total,
      (select json_agg(i order by i.severity desc, i.affected_sessions desc, i.signal_count desc, i.id)::text
       from (${page}) i) as issues`.execute(db);
  return { rows: JSON.parse(rows[0].issues ?? '[]') as IssueFields[], total: rows[0].total };
}

/**
 * issuesOfPageJson's issues as the JSON text of their presentIssue forms, in the same order, written by the database:
 * the page view sends the text as it is instead of parsing 100 issues and serializing them again (page-view-text.int.test.ts
 * holds it to JSON.stringify of presentIssue, byte for byte). The order is read from `ux_issues_page_list_idx`
 * (migration 0430).
 */
export function issuesOfPageText(db: Kysely<Database>, s: PageScope, statuses: readonly string[], limit: number) {
  const rows = db
    .selectFrom('ux_issues')
    .select(LIST_COLUMNS)
    .where(onPage(s))
    .where('status', 'in', [...statuses])
    .$call(mostSevereFirst)
    .limit(limit);
  const time = (column: string) => sql`${isoMs<null>(sql.ref(`i.${column}`))} as ${sql.ref(column)}`;
  // presentIssue's signallingAgain, on the times as the driver's Dates hold them (cut to the millisecond).
  const again = sql`i.status in ('resolved', 'verified') and i.signalling_again_at is not null
    and (i.resolved_at is null
         or date_trunc('milliseconds', i.signalling_again_at) >= date_trunc('milliseconds', i.resolved_at))`;
  // One row per issue with presentIssue's fields in its order, written by row_to_json (compact, to_json's escapes).
  const presented = sql`select i.id, i.site_id, i.title, i.page, i.selector as element_selector, i.selector,
      i.signal_type as type, i.signal_type, i.label, i.signal_count, i.affected_sessions,
      ${round1Real(sql.ref('i.severity'))} as severity, i.status, ${again} as signalling_again, i.note, i.assigned_to,
      i.frozen, i.merged_into, ${time('last_signal_at')}, ${time('created_at')}, ${time('updated_at')}`;
  return sql<string>`(select '[' || coalesce(string_agg(row_to_json(p)::text, ','
        order by i.severity desc, i.affected_sessions desc, i.id), '') || ']'
    from (${rows}) i cross join lateral (${presented}) p)`;
}

/** One issue of a site and environment with its hypothesis, evidence sessions (most signals first) and history, or undefined. */
export async function findIssue(db: Kysely<Database>, siteId: string, environment: Environment, id: string) {
  const issue = await db
    .selectFrom('ux_issues')
    .select([...LIST_COLUMNS, 'hypothesis', 'first_signal_at', 'evidence', 'introduced_by_deploy'])
    .where(inScope({ site_id: siteId, environment }))
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

/** The times of an issue row: Dates from the driver, ISO text from a JSON document the database built (isoMs). */
const LIST_TIMES = ['created_at', 'updated_at', 'last_signal_at', 'resolved_at', 'signalling_again_at'] as const;
type ListTime = (typeof LIST_TIMES)[number];

const notATime = (c: (typeof LIST_COLUMNS)[number]): c is Exclude<(typeof LIST_COLUMNS)[number], ListTime> =>
  !(LIST_TIMES as readonly string[]).includes(c);

/** An issue as presentIssue reads it: a row of listIssues, or an element of issuesOfPageJson. */
export type IssueFields = Omit<IssueRow, ListTime> & {
  [K in ListTime]: null extends IssueRow[K] ? Date | string | null : Date | string;
};

/**
 * Issues of one page of an environment in `statuses`, most severe first, at most `limit`, as one JSON array built by
 * the database (a subquery for a statement to embed): JSON.parse reads it natively, where the driver would parse each
 * field of each row (100 issues with five times each on the page view), and the times come as ISO text.
 */
export function issuesOfPageJson(db: Kysely<Database>, s: PageScope, statuses: readonly string[], limit: number) {
  const rows = db
    .selectFrom('ux_issues')
    .select(LIST_COLUMNS.filter(notATime))
    .select((eb) => LIST_TIMES.map((c) => isoMs<null>(eb.ref(c)).as(c)))
    .where(onPage(s))
    .where('status', 'in', [...statuses])
    .$call(mostSevereFirst)
    .limit(limit);
  return sql<
    IssueFields[]
  >`(select coalesce(json_agg(i order by i.severity desc, i.affected_sessions desc, i.id), '[]') from (${rows}) i)`;
}
