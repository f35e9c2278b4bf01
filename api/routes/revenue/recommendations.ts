import type { Kysely } from 'kysely';
import type { Database } from '../../../shared/db/database.ts';
import type { Environment } from '../../../shared/domain/deploy-verification.ts';
import { presentRecommendations, revenueUnavailable } from './revenue.presenter.ts';
import {
  activeIssuesUnmeasured,
  conversionSummary,
  issueConversions,
  revenueConfig,
  REVENUE_WINDOW_DAYS,
} from './revenue.queries.ts';

/** The site's revenue settings and, when tracking is wired, the average conversion value. */
export async function tracking(db: Kysely<Database>, siteId: string, environment: Environment, at: Date) {
  const config = await revenueConfig(db, siteId, environment);
  const summary = config.enabled
    ? await conversionSummary(
        db,
        siteId,
        environment,
        config.conversion_event,
        new Date(at.getTime() - REVENUE_WINDOW_DAYS * 86_400_000),
      )
    : { sessions: 0, average_value: null };
  return { config, summary, off: revenueUnavailable(config, summary.sessions) };
}

/** `/query/recommendations`: the `limit` best-ranked fixes and the count of all. */
export async function siteRecommendations(
  db: Kysely<Database>,
  siteId: string,
  environment: Environment,
  at: Date,
  limit: number,
) {
  const t = await tracking(db, siteId, environment, at);
  // Without tracking the ranking is severity then affected sessions: the conversion groups would go unused, and the
  // database ranks and cuts the list itself.
  const { issues, total } =
    t.off === null
      ? await issueConversions(db, siteId, environment, t.config.conversion_event, at).then((all) => ({
          issues: all,
          total: all.length,
        }))
      : await activeIssuesUnmeasured(db, siteId, environment, limit);
  return presentRecommendations(
    siteId,
    t.off === null ? t.config.currency : null,
    t.summary.average_value,
    issues,
    limit,
    total,
  );
}
