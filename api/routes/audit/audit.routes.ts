import type { Kysely } from 'kysely';
import type { Database } from '../../../shared/db/database.ts';
import { ADMIN_ROLES, READ_SCOPES } from '../../http/auth.ts';
import type { RouteTable } from '../../http/routes.ts';
import { listAuditEntries } from './audit.queries.ts';
import { AuditListSchema, AuditQuerySchema } from './audit.schema.ts';

/** `GET /v1/query/audit`: the org's audit log, newest first. */
export function auditRoutes(table: RouteTable, deps: { db: Kysely<Database> }): RouteTable {
  return table.add({
    method: 'get',
    path: '/v1/query/audit',
    tag: 'audit',
    summary: 'Audit log of the organization, newest first',
    description:
      'Org-scoped. Owners and admins see every entry; a site-scoped key sees the entries of its own site. `actor` and `action` narrow the list. ' +
      "Sign-ins (auth.login), failed sign-ins on a member's account (auth.login_failed, with the client address and the reason, never the password), " +
      'sign-outs (auth.logout), password changes and resets are recorded with every write. Entries are kept as long as the organization exists.',
    access: { surface: 'read', scopes: READ_SCOPES, roles: ADMIN_ROLES },
    query: AuditQuerySchema,
    response: AuditListSchema,
    async handler(_ctx, { query, principal, guard }) {
      guard.org(query.org_id, 'organization not found');
      const siteId = principal.kind === 'key' && principal.siteId ? principal.siteId : undefined;
      const rows = await listAuditEntries(deps.db, query.org_id, query.limit, {
        siteId,
        actor: query.actor,
        action: query.action,
      });
      return { org_id: query.org_id, entries: rows.map((r) => ({ ...r, created_at: r.created_at.toISOString() })) };
    },
  });
}
