import { orgUsage } from '../../../shared/db/queries/usage.queries.ts';
import { NotFoundError } from '../../../shared/errors.ts';
import { limitsOf, monthStart, nextMonthStart } from '../../../shared/tenancy/plans.ts';
import { MANAGE_READ_ACCESS } from '../../http/auth.ts';
import type { RouteTable } from '../../http/routes.ts';
import { OrgQuerySchema } from '../../http/common.schema.ts';
import type { ManageDeps } from '../../http/deps.ts';
import { UsageSchema } from './usage.schema.ts';

/** `GET /v1/manage/usage`: the org's plan, its limits and this month's usage against them. */
export function usageRoutes(table: RouteTable, deps: ManageDeps): RouteTable {
  return table.add({
    method: 'get',
    path: '/v1/manage/usage',
    tag: 'usage',
    summary: "Plan, limits and this month's sessions and sites",
    access: MANAGE_READ_ACCESS,
    query: OrgQuerySchema,
    response: UsageSchema,
    async handler(_ctx, { query, guard }) {
      guard.org(query.org_id, 'organization not found');
      const now = deps.now();
      const from = monthStart(now);
      const u = await orgUsage(deps.db, query.org_id, from);
      if (!u) throw new NotFoundError('organization not found');
      const limits = limitsOf(u, now);
      return {
        org_id: query.org_id,
        plan: u.plan,
        trial_ends_at: u.trialEndsAt?.toISOString() ?? null,
        trial_active: u.trialEndsAt !== null && u.trialEndsAt > now,
        limits: { sites: limits.sites, sessions_per_month: limits.sessionsPerMonth },
        usage: {
          sites: u.sites,
          sessions_this_month: u.sessions,
          month_start: from.toISOString(),
          resets_at: nextMonthStart(now).toISOString(),
        },
        sessions_exceeded: limits.sessionsPerMonth !== null && u.sessions >= limits.sessionsPerMonth,
      };
    },
  });
}
