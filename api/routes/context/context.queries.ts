import { sql, type Kysely } from 'kysely';
import type { Database } from '../../../shared/db/database.ts';
import { inScope } from '../../../shared/db/scope.ts';
import { mostSevereFirst } from '../../read-models/issues.queries.ts';
import { pageWithTotal } from '../../../shared/db/snapshot.ts';
import { ACTIVE_STATUSES } from '../../../shared/domain/issue-status.ts';
import type { Environment } from '../../../shared/domain/deploy-verification.ts';

const ACTIVE_ALERT_STATUSES = ['fired', 'acknowledged', 'investigating'];

/** Active issues of a site and environment, most severe first, at most `limit`, with the count of all. */
export async function activeIssues(db: Kysely<Database>, siteId: string, environment: Environment, limit: number) {
  return pageWithTotal(
    db,
    (trx) =>
      trx
        .selectFrom('ux_issues')
        .where(inScope({ site_id: siteId, environment }))
        .where('status', 'in', [...ACTIVE_STATUSES]),
    (base) =>
      base
        .select([
          'id',
          'title',
          'page',
          'signal_type',
          sql<number>`severity::float8`.as('severity'),
          'status',
          'affected_sessions',
        ])
        .$call(mostSevereFirst)
        .limit(limit)
        .execute(),
  );
}

/** Active alerts of a site, newest first, at most `limit`, each with its rule's channels, and the count of all. */
export async function activeAlerts(db: Kysely<Database>, siteId: string, limit: number) {
  return pageWithTotal(
    db,
    (trx) =>
      trx.selectFrom('alerts as a').where('a.site_id', '=', siteId).where('a.status', 'in', ACTIVE_ALERT_STATUSES),
    (base) =>
      base
        .leftJoin('alert_rules as r', 'r.id', 'a.rule_id')
        .select([
          'a.id',
          'a.rule_name',
          'a.page',
          'a.trigger_type',
          'a.score_before',
          'a.score_after',
          'a.status',
          'a.triggered_at',
          'r.channels',
        ])
        .orderBy('a.triggered_at', 'desc')
        .orderBy('a.id')
        .limit(limit)
        .execute(),
  );
}
