import type { Transaction } from 'kysely';
import type { z } from 'zod';
import type { Database } from '../../shared/db/database.ts';
import { announceOutboxRows } from '../../shared/notify/outbox.ts';
import { audit } from './audit.ts';
import { MANAGE_WRITE_ACCESS, type Principal } from './auth.ts';
import type { ManageDeps } from './deps.ts';
import { idParam, type RouteTable } from './routes.ts';

/** What a change did: its answer, the audited changes (none: nothing changed, nothing audited), whether it queued outbox rows. */
export interface ChangeOutcome {
  answer: unknown;
  changes?: Record<string, unknown>;
  queued?: boolean;
}

/**
 * A person's change to one object of a site: PATCH `/v1/manage/<plural>/:<id>` and the spec's short form POST
 * `/v1/<plural>/:<id>` (one description for both), an editor's write. In one transaction: `lock` reads the object
 * for update (with its org), a missing or foreign one answers `notFound`, `apply` changes it; its changes are
 * audited as `<target>.update`, and when it queued outbox rows the relay is told once the transaction committed
 * (never for a change that rolled back).
 */
export function addObjectChange<K extends string, B extends z.ZodType, O extends { site_id: string; org_id: string }>(
  table: RouteTable,
  deps: Pick<ManageDeps, 'db' | 'bus' | 'topology'>,
  spec: {
    plural: string;
    id: K;
    target: string;
    tag: string;
    summary: string;
    description: string;
    notFound: string;
    body: B;
    response: z.ZodType;
    lock(trx: Transaction<Database>, id: string): Promise<O | undefined>;
    apply(
      trx: Transaction<Database>,
      before: O,
      input: { id: string; body: z.infer<B>; principal: Principal },
    ): Promise<ChangeOutcome>;
  },
): RouteTable {
  return table.add({
    method: 'patch',
    path: `/v1/manage/${spec.plural}/:${spec.id}`,
    tag: spec.tag,
    summary: spec.summary,
    description: spec.description,
    shortForm: {
      method: 'post',
      path: `/v1/${spec.plural}/:${spec.id}`,
      summary: `${spec.summary} (short form)`,
      description: spec.description,
    },
    access: MANAGE_WRITE_ACCESS,
    params: idParam(spec.id),
    notFound: spec.notFound,
    body: spec.body,
    response: spec.response,
    async handler(_ctx, { params, body, principal, guard }) {
      const id = (params as Record<K, string>)[spec.id];
      const { answer, queued } = await deps.db.transaction().execute(async (trx) => {
        const before = await spec.lock(trx, id);
        guard.site(before?.site_id, spec.notFound);
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
