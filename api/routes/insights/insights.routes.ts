import Router from '@koa/router';
import type Koa from 'koa';
import type { Kysely } from 'kysely';
import type { z } from 'zod';
import type { Database } from '../../../shared/db/database.ts';
import { ok } from '../../../shared/http/envelope.ts';
import { siteQuery } from '../../http/auth.ts';
import { revenueConfig } from '../revenue/revenue.queries.ts';
import { InsightsQuerySchema, type InsightsResponseSchema } from '../revenue/revenue.schema.ts';
import { rankInsights, withRates, MIN_GROUP_SESSIONS } from './insights.ts';
import { confusedVersusCalm } from './insights.queries.ts';

/** `/v1/query/insights`: confused versus calm sessions' conversion by page and source, with ranked insights. */
export function insightsRouter(deps: { db: Kysely<Database>; readAuth: Koa.Middleware; now?: () => Date }): Router {
  const now = deps.now ?? (() => new Date());
  const router = new Router();
  router.get('/v1/query/insights', deps.readAuth, async (ctx) => {
    const q = siteQuery(ctx, InsightsQuerySchema);
    const { conversion_event } = await revenueConfig(deps.db, q.site_id, q.environment);
    const since = new Date(now().getTime() - q.days * 86_400_000);
    const r = await confusedVersusCalm(deps.db, q.site_id, q.environment, conversion_event, since);
    const common = { site_id: q.site_id, days: q.days, conversion_event, min_group_sessions: MIN_GROUP_SESSIONS };
    if (r.converting === 0) {
      ctx.body = ok({
        ...common,
        enabled: false,
        reason: `no ${conversion_event} events in the last ${q.days} days: insights compare conversion, so the SDK must send them (type conversion, or a custom event named by revenue_config.conversion_event)`,
        pages: [],
        sources: [],
        insights: [],
      } satisfies z.output<typeof InsightsResponseSchema>);
      return;
    }
    ctx.body = ok({
      ...common,
      enabled: true,
      reason: null,
      pages: r.pages.map(withRates),
      sources: r.sources.map(withRates),
      insights: rankInsights(r.pages, r.sources),
    } satisfies z.output<typeof InsightsResponseSchema>);
  });
  return router;
}
