import type { Transaction } from 'kysely';
import type { z } from 'zod';
import type { Database } from '../../shared/db/database.ts';
import { announceOutboxRows } from '../../shared/notify/outbox.ts';
import { audit } from './audit.ts';
import { MANAGE_WRITE_ACCESS, type Principal } from './auth.ts';
import type { ManageDeps } from './deps.ts';
import { idParam, type RouteTable } from './routes.ts';
import { lockSiteObject, type SiteObject, type SiteObjectTable } from './site-object.queries.ts';

/** What a change did: its answer, the audited changes (none: nothing changed, nothing audited), whether it queued outbox rows. */
export interface ChangeOutcome {
  answer: unknown;
  changes?: Record<string, unknown>;
  queued?: boolean;
}

/**
 * A person's change to one object of a site, named `target` (`alert`): PATCH `/v1/manage/<target>s/:<target>_id`
 * and the spec's short form POST `/v1/<target>s/:<target>_id` (one description for both, tagged `<target>s`), an
 * editor's write. In one transaction the object's row in `table` is read for update (with its org); a missing or
 * foreign one answers `<target> not found`, `apply` changes it; its changes are audited as `<target>.update`, and
 * when it queued outbox rows the relay is told once the transaction committed (never for a change that rolled back).
 */
export function addObjectChange<N extends string, T extends SiteObjectTable, B extends z.ZodType>(
  table: RouteTable,
  deps: Pick<ManageDeps, 'db' | 'bus' | 'topology'>,
  spec: {
    target: N;
    table: T;
    summary: string;
    description: string;
    body: B;
    response: z.ZodType;
    apply(
      trx: Transaction<Database>,
      before: SiteObject<T>,
      input: { id: string; body: z.infer<B>; principal: Principal },
    ): Promise<ChangeOutcome>;
  },
): RouteTable {
  const plural = `${spec.target}s`;
  const idName = `${spec.target}_id` as const;
  const notFound = `${spec.target} not found`;
  return table.add({
    method: 'patch',
    path: `/v1/manage/${plural}/:${idName}`,
    tag: plural,
    summary: spec.summary,
    description: spec.description,
    shortForm: {
      method: 'post',
      path: `/v1/${plural}/:${idName}`,
      summary: `${spec.summary} (short form)`,
      description: spec.description,
    },
    access: MANAGE_WRITE_ACCESS,
    params: idParam(idName),
    notFound,
    body: spec.body,
    response: spec.response,
    async handler(_ctx, { params, body, principal, guard }) {
      const id = (params as Record<typeof idName, string>)[idName];
      const { answer, queued } = await deps.db.transaction().execute(async (trx) => {
        const before = await lockSiteObject(trx, spec.table, id);
        guard.site(before?.site_id, notFound);
        const outcome = await spec.apply(trx, before!, { id, body: body as z.infer<B>, principal });
        if (outcome.changes)
          await audit(trx, principal, {
            orgId: before!.org_id,
            siteId: before!.site_id,
            action: `${spec.target}.update`,
            targetType: spec.target,
            targetId: id,
            summary: { changes: outcome.changes },
          });
        return outcome;
      });
      if (queued) announceOutboxRows(deps.bus, deps.topology.outboxQueuedSubject);
      return answer;
    },
  });
}
