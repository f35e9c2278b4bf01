import { announceOutboxRows, enqueueOutbox, type OutboxMessage } from '../../../shared/notify/outbox.ts';
import { ConflictError } from '../../../shared/errors.ts';
import { newId } from '../../../shared/ids.ts';
import { EDITOR_ROLES, MANAGE_SCOPES } from '../../http/auth.ts';
import { idParam, type RouteTable } from '../../http/routes.ts';
import { audit, diff } from '../../http/audit.ts';
import type { ManageDeps } from '../../http/deps.ts';
import { findIssueForUpdate, insertApiIssueUpdate, updateIssueFields, type IssueRow } from './issues.manage.queries.ts';
import { IssuePatchSchema, IssueRecordSchema } from './issues.manage.schema.ts';

const NOT_FOUND = 'issue not found';

function presentIssue(i: IssueRow) {
  return {
    id: i.id,
    site_id: i.site_id,
    title: i.title,
    page: i.page,
    element_selector: i.selector,
    selector: i.selector,
    type: i.signal_type,
    signal_type: i.signal_type,
    signal_count: i.signal_count,
    affected_sessions: i.affected_sessions,
    severity: i.severity,
    status: i.status,
    note: i.note,
    assigned_to: i.assigned_to,
    frozen: i.frozen,
    created_at: i.created_at.toISOString(),
    updated_at: i.updated_at.toISOString(),
  };
}

/**
 * The `issue.updated` event of a person's change: the same event the engine, the triage and deploy verification
 * send (`issue` as it is now, `changes` field by field), with who made it.
 */
function issueUpdatedByPerson(
  i: IssueRow,
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

/** PATCH /v1/manage/issues/:issue_id and the short form POST /v1/issues/:id: triage by a person. */
export function issueRoutes(table: RouteTable, deps: ManageDeps): RouteTable {
  for (const [method, path, param] of [
    ['patch', '/v1/manage/issues/:issue_id', 'issue_id'],
    ['post', '/v1/issues/:issue_id', 'issue_id'],
  ] as const) {
    table.add({
      method,
      path,
      tag: 'issues',
      summary: `Set an issue's status, note, assignee, frozen flag or severity${method === 'post' ? ' (short form)' : ''}`,
      description:
        'Any of the six statuses may be set from any status, `regressed` included (a person triaging a regression). Refused: setting `regressed` (400: only the engine sets it after a deploy) and any change to an issue the triage merged into another (409: change the issue it was merged into). A change sends an issue.updated event (webhooks) once it committed, through the same outbox as the processor changes, in order with the other events of the issue.',
      access: { surface: 'manage', scopes: MANAGE_SCOPES, roles: EDITOR_ROLES },
      params: idParam(param),
      notFound: NOT_FOUND,
      body: IssuePatchSchema,
      response: IssueRecordSchema,
      async handler(_ctx, { params, body, principal, guard }) {
        const id = (params as Record<string, string>)[param];
        const { presented, queued } = await deps.db.transaction().execute(async (trx) => {
          const before = await findIssueForUpdate(trx, id);
          guard.site(before?.site_id, NOT_FOUND);
          if (before!.merged_into)
            throw new ConflictError(`this issue was merged into ${before!.merged_into}; change that issue instead`);
          const changes = diff(before!, body);
          if (Object.keys(changes).length === 0) return { presented: presentIssue(before!), queued: false };
          const now = deps.now();
          const after = await updateIssueFields(trx, id, body, now);
          await insertApiIssueUpdate(trx, id, changes, principal.label);
          await audit(trx, principal, {
            orgId: before!.org_id,
            siteId: after.site_id,
            action: 'issue.update',
            targetType: 'issue',
            targetId: id,
            summary: { changes },
          });
          await enqueueOutbox(trx, [issueUpdatedByPerson(after, changes, principal.label, now)]);
          return { presented: presentIssue(after), queued: true };
        });
        if (queued) announceOutboxRows(deps.bus, deps.topology.outboxQueuedSubject);
        return presented;
      },
    });
  }
  return table;
}
