import type { SelectQueryBuilder, Transaction } from 'kysely';
import type { Database } from '../db/database.ts';
import { QuotaExceededError } from './plans.ts';

/**
 * What one tenant may create, whatever its plan: enough for any real use, small enough that a script (or a leaked
 * manage key) cannot fill the database or slow every list. Environments are a fixed set of names (production,
 * staging); sites and sessions are the plan's.
 */
export const TENANT_BOUNDS = {
  /** Unrevoked API keys per site. */
  api_keys: 50,
  /** Webhook endpoints per org (not deleted). */
  webhooks: 50,
  /** Alert rules per site. */
  alert_rules: 200,
  /** Pending invitations per org. */
  invitations: 200,
} as const;
export type Bounded = keyof typeof TENANT_BOUNDS;

/**
 * Refuses the creation of one more `what` under `parentId` (a site for keys and alert rules, an org otherwise)
 * when the bound is reached: 429 `quota_exceeded` with `{ limit, current }`. Locks the parent row first, so
 * racing creations cannot pass the bound together.
 */
export async function enforceBound(
  trx: Transaction<Database>,
  what: Bounded,
  parentId: string,
  now = new Date(),
): Promise<void> {
  const limit = TENANT_BOUNDS[what];
  const bySite = what === 'api_keys' || what === 'alert_rules';
  if (bySite) await trx.selectFrom('sites').select('id').where('id', '=', parentId).forUpdate().execute();
  else await trx.selectFrom('orgs').select('id').where('id', '=', parentId).forUpdate().execute();
  const count = async (): Promise<number> => {
    switch (what) {
      case 'api_keys':
        return countOf(trx.selectFrom('api_keys').where('site_id', '=', parentId).where('revoked_at', 'is', null));
      case 'alert_rules':
        return countOf(trx.selectFrom('alert_rules').where('site_id', '=', parentId));
      case 'webhooks':
        return countOf(
          trx.selectFrom('webhook_endpoints').where('org_id', '=', parentId).where('deleted_at', 'is', null),
        );
      case 'invitations':
        return countOf(
          trx
            .selectFrom('invitations')
            .where('org_id', '=', parentId)
            .where('accepted_at', 'is', null)
            .where('revoked_at', 'is', null)
            .where('expires_at', '>', now),
        );
    }
  };
  const current = await count();
  if (current >= limit)
    throw new QuotaExceededError(
      `at most ${limit} ${what.replace('_', ' ')} (${bySite ? 'per site' : 'per organization'})`,
      { limit, current },
    );
}

/** How many rows `q` selects. */
async function countOf<TB extends keyof Database>(q: SelectQueryBuilder<Database, TB, object>): Promise<number> {
  const r = await q.select((eb) => eb.fn.countAll<string>().as('n')).executeTakeFirstOrThrow();
  return Number(r.n);
}
