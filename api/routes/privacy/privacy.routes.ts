import { SiteQuerySchema } from '../../http/common.schema.ts';
import { createHash } from 'node:crypto';
import type { Transaction } from 'kysely';
import type { Database } from '../../../shared/db/database.ts';
import { ADMIN_ROLES, type Principal } from '../../http/auth.ts';
import type { RouteTable } from '../../http/routes.ts';
import { audit } from '../../http/audit.ts';
import type { ManageDeps } from '../../http/deps.ts';
import { presentErasure } from './privacy.presenter.ts';
import { eraseSessions, sessionsOfAnonymousId } from './privacy.queries.ts';
import { ErasedSchema, SessionParamsSchema, VisitorParamsSchema } from './privacy.schema.ts';

/** Owners and admins, signed in: an erasure cannot be undone, so no key may make one. */
const ERASER = { surface: 'manage' as const, scopes: [], roles: ADMIN_ROLES };

/** The audit entry names what was erased by a digest: the log must not keep the identifier it says was erased. */
const digest = (id: string) => `sha256:${createHash('sha256').update(id).digest('hex').slice(0, 16)}`;

/** Erases `sessions` of a site in one transaction, audited as privacy.erase of `target` named by its digest. */
async function erase(
  deps: ManageDeps,
  principal: Principal,
  siteId: string,
  target: { type: string; id: string },
  sessions: (trx: Transaction<Database>) => Promise<string[]>,
) {
  return deps.db.transaction().execute(async (trx) => {
    const erased = await eraseSessions(trx, siteId, await sessions(trx));
    await audit(trx, principal, {
      orgId: principal.orgId,
      siteId,
      action: 'privacy.erase',
      targetType: target.type,
      targetId: digest(target.id),
      summary: { ...erased },
    });
    return presentErasure(siteId, erased);
  });
}

/** Erasure of an observed visitor's data (docs/privacy.md): by session id, or by the anonymous id given to identify(). */
export function privacyRoutes(table: RouteTable, deps: ManageDeps): RouteTable {
  table.add({
    method: 'delete',
    path: '/v1/manage/sessions/:session_id',
    tag: 'privacy',
    summary:
      'Erase one session of a site: its events, signals and session row; scores, issues and elements are recomputed without it',
    description:
      'Owner or admin user token. Answers what was deleted (zeros when nothing matched: the same answer whether or not the session existed). Audited as privacy.erase.',
    access: ERASER,
    params: SessionParamsSchema,
    query: SiteQuerySchema,
    response: ErasedSchema,
    async handler(_ctx, { params, query, principal, guard }) {
      guard.site(query.site_id, 'site not found');
      return erase(deps, principal, query.site_id, { type: 'session', id: params.session_id }, async () => [
        params.session_id,
      ]);
    },
  });
  table.add({
    method: 'delete',
    path: '/v1/manage/visitors/:anonymous_id',
    tag: 'privacy',
    summary:
      'Erase every session of a site seen with one anonymous id (identify()): events, signals and session rows; derived rows recomputed',
    description: 'Owner or admin user token. Audited as privacy.erase.',
    access: ERASER,
    params: VisitorParamsSchema,
    query: SiteQuerySchema,
    response: ErasedSchema,
    async handler(_ctx, { params, query, principal, guard }) {
      guard.site(query.site_id, 'site not found');
      return erase(deps, principal, query.site_id, { type: 'anonymous_id', id: params.anonymous_id }, (trx) =>
        sessionsOfAnonymousId(trx, query.site_id, params.anonymous_id),
      );
    },
  });
  return table;
}
