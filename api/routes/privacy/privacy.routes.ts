import { SiteQuerySchema } from '../../http/common.schema.ts';
import { createHash } from 'node:crypto';
import type { Transaction } from 'kysely';
import type { z } from 'zod';
import type { Database } from '../../../shared/db/database.ts';
import { ADMIN_ROLES } from '../../http/auth.ts';
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

/**
 * One erasure route: DELETE `path` of a site's visitor data (owners and admins), its id in the path. In one
 * transaction it erases `sessions` (found from the path id), audited as privacy.erase of the id by its digest, and
 * answers what was deleted.
 */
function addErasure<P extends z.ZodObject>(
  table: RouteTable,
  deps: ManageDeps,
  spec: {
    path: string;
    summary: string;
    description: string;
    params: P;
    target: (params: z.infer<P>) => { type: string; id: string };
    sessions: (trx: Transaction<Database>, siteId: string, params: z.infer<P>) => Promise<string[]>;
  },
): RouteTable {
  return table.add({
    method: 'delete',
    path: spec.path,
    tag: 'privacy',
    summary: spec.summary,
    description: spec.description,
    access: ERASER,
    params: spec.params,
    query: SiteQuerySchema,
    response: ErasedSchema,
    async handler(_ctx, { params, query, principal, guard }) {
      const siteId = query.site_id;
      guard.site(siteId, 'site not found');
      const target = spec.target(params as z.infer<P>);
      return deps.db.transaction().execute(async (trx) => {
        const erased = await eraseSessions(trx, siteId, await spec.sessions(trx, siteId, params as z.infer<P>));
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
    },
  });
}

/** Erasure of an observed visitor's data (docs/privacy.md): by session id, or by the anonymous id given to identify(). */
export function privacyRoutes(table: RouteTable, deps: ManageDeps): RouteTable {
  addErasure(table, deps, {
    path: '/v1/manage/sessions/:session_id',
    summary:
      'Erase one session of a site: its events, signals and session row; scores, issues and elements are recomputed without it',
    description:
      'Owner or admin user token. Answers what was deleted (zeros when nothing matched: the same answer whether or not the session existed). Audited as privacy.erase.',
    params: SessionParamsSchema,
    target: (p) => ({ type: 'session', id: p.session_id }),
    sessions: async (_trx, _siteId, p) => [p.session_id],
  });
  return addErasure(table, deps, {
    path: '/v1/manage/visitors/:anonymous_id',
    summary:
      'Erase every session of a site seen with one anonymous id (identify()): events, signals and session rows; derived rows recomputed',
    description: 'Owner or admin user token. Audited as privacy.erase.',
    params: VisitorParamsSchema,
    target: (p) => ({ type: 'anonymous_id', id: p.anonymous_id }),
    sessions: (trx, siteId, p) => sessionsOfAnonymousId(trx, siteId, p.anonymous_id),
  });
}
