import { SiteReadQuerySchema } from '../../http/common.schema.ts';
import { listPage } from '../../http/present.ts';
import { type Kysely } from 'kysely';
import { type Database } from '../../../shared/db/database.ts';
import { ConflictError } from '../../../shared/errors.ts';
import { type ReadDeps, type ManageDeps } from '../../http/deps.ts';
import { idParam, type RouteTable } from '../../http/routes.ts';
import { type z } from 'zod';
import { IssueDetailSchema, IssueListQuerySchema, IssueListResponseSchema, IssuePatchSchema } from './issues.schema.ts';
import { IssueSchema } from '../../read-models/issues.schema.ts';
import { updateIssueFields, type IssueRecord } from './issues.queries.ts';
import { insertIssueUpdates } from '../../../shared/db/queries/issue-updates.queries.ts';
import { findIssue, listIssues } from '../../read-models/issues.queries.ts';
import { presentIssue } from '../../read-models/issues.presenter.ts';
import { isoOrNull, presentSessionId } from '../../http/present.ts';
import { type Environment } from '../../../shared/domain/deploy-verification.ts';
import { issueVerifications } from '../../read-models/deploys.queries.ts';
import { presentVerification } from '../../read-models/deploys.presenter.ts';
import { enqueueOutbox, type OutboxMessage } from '../../../shared/notify/outbox.ts';
import { addObjectChange } from '../../http/object-change.ts';
import { newId } from '../../../shared/ids.ts';
import { diff } from '../../http/audit.ts';

const NOT_FOUND = 'issue not found';

/** One issue of the site and environment with its evidence sessions, verification history and changes; undefined when missing. */
export async function issueDetail(
  db: Kysely<Database>,
  siteId: string,
  environment: Environment,
  id: string,
): Promise<z.output<typeof IssueDetailSchema> | undefined> {
  const found = await findIssue(db, siteId, environment, id);
  if (!found) return undefined;
  const { issue, sessions, updates } = found;
  return {
    ...presentIssue(issue),
    hypothesis: issue.hypothesis,
    first_signal_at: isoOrNull(issue.first_signal_at),
    resolved_at: isoOrNull(issue.resolved_at),
    sessions: sessions.map((s) => ({
      id: presentSessionId(s.session_id),
      signals: s.signals,
      timestamp: isoOrNull(s.last_signal_at),
    })),
    introduced_by_deploy: issue.introduced_by_deploy,
    verifications: (await issueVerifications(db, issue.id)).map(presentVerification),
    history: updates.map((u) => ({
      source: u.source,
      kind: u.kind,
      changes: u.changes,
      reason: u.reason,
      at: isoOrNull(u.created_at),
    })),
  };
}

/** `/v1/query/issues`, `/v1/query/issues/:issue_id` and their short forms `/v1/issues`, `/v1/issues/:id`. */
export function issueReadRoutes(table: RouteTable, deps: ReadDeps): RouteTable {
  table.read({
    path: '/v1/query/issues',
    shortForm: 'UX issues of a site (short form)',
    tag: 'issues',
    summary: 'UX issues of a site, ranked',
    query: IssueListQuerySchema,
    response: IssueListResponseSchema,
    handler: async (_ctx, { query }) => listPage('issues', await listIssues(deps.db, query), presentIssue, query),
  });
  return table.read({
    path: '/v1/query/issues/:issue_id',
    shortForm: 'One issue (short form)',
    tag: 'issues',
    summary: 'One issue with its evidence sessions and history',
    description: '404 for an issue of another site, or of another environment than environment (default production).',
    query: SiteReadQuerySchema,
    // A malformed id is answered like a missing one: ids are not worth a different error.
    params: idParam('issue_id'),
    notFound: NOT_FOUND,
    response: IssueDetailSchema,
    handler: (_ctx, { query, params }) => issueDetail(deps.db, query.site_id, query.environment, params.issue_id),
  });
}

/**
 * The `issue.updated` event of a person's change: the same event the engine, the triage and deploy verification
 * send (`issue` as it is now, `changes` field by field), with who made it.
 */
function issueUpdatedByPerson(
  i: IssueRecord,
  changes: Record<string, { from: unknown; to: unknown }>,
  actor: string,
  at: Date,
): OutboxMessage {
  return {
    kind: 'issue.updated',
    aggregate: `issue:${i.id}`,
    msgId: `issue.updated:${i.id}:${newId()}`,
    payload: {
      event: 'issue.updated',
      occurred_at: at.toISOString(),
      actor,
      changes,
      issue: {
        id: i.id,
        site_id: i.site_id,
        environment: i.environment,
        page: i.page,
        element_selector: i.selector,
        signal_type: i.signal_type,
        title: i.title,
        status: i.status,
        signal_count: i.signal_count,
        affected_sessions: i.affected_sessions,
        severity: i.severity,
        note: i.note,
        assigned_to: i.assigned_to,
        frozen: i.frozen,
      },
    },
  };
}

const ISSUE_PATCH =
  'Any of the six statuses may be set from any status, `regressed` included (a person triaging a regression). Refused: setting `regressed` (400: only the engine sets it after a deploy) and any change to an issue the triage merged into another (409: change the issue it was merged into). A change sends an issue.updated event (webhooks) once it committed, through the same outbox as the processor changes, in order with the other events of the issue.';

/** PATCH /v1/manage/issues/:issue_id and the short form POST /v1/issues/:id: triage by a person. */
export function issueRoutes(table: RouteTable, deps: ManageDeps): RouteTable {
  return addObjectChange(table, deps, {
    target: 'issue',
    table: 'ux_issues',
    summary: "Set an issue's status, note, assignee, frozen flag or severity",
    description: ISSUE_PATCH,
    body: IssuePatchSchema,
    response: IssueSchema,
    async apply(trx, before, { id, body, principal }) {
      if (before.merged_into)
        throw new ConflictError(`this issue was merged into ${before.merged_into}; change that issue instead`);
      const changes = diff(before, body);
      if (Object.keys(changes).length === 0) return { answer: presentIssue(before) };
      const now = deps.now();
      const after = await updateIssueFields(trx, id, body, now);
      // One line of the issue's history, beside the engine's and the triage's.
      await insertIssueUpdates(trx, [
        { issueId: id, source: 'api', kind: 'manual', changes, reason: `by ${principal.label}` },
      ]);
      await enqueueOutbox(trx, [issueUpdatedByPerson(after, changes, principal.label, now)]);
      return { answer: presentIssue(after), changes, queued: true };
    },
  });
}
