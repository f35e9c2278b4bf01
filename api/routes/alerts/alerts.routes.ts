import Router from '@koa/router';
import type Koa from 'koa';
import type { Kysely } from 'kysely';
import { Uuid } from '../../../shared/contracts/uuid.ts';
import type { Database } from '../../../shared/db/database.ts';
import { NotFoundError } from '../../../shared/errors.ts';
import { ok } from '../../../shared/http/envelope.ts';
import { siteQuery } from '../../http/auth.ts';
import { presentAlert } from './alerts.presenter.ts';
import { findAlert, listAlerts } from './alerts.queries.ts';
import { AlertDetailQuerySchema, AlertListQuerySchema } from './alerts.schema.ts';

export interface AlertsDeps {
  db: Kysely<Database>;
  readAuth: Koa.Middleware;
}

/** `/v1/query/alerts` (and the short form `/v1/alerts`) and `/v1/query/alerts/:alert_id`: a site's alerts, newest first. */
export function alertsRouter(deps: AlertsDeps): Router {
  const router = new Router();
  const list: Koa.Middleware = async (ctx) => {
    const q = siteQuery(ctx, AlertListQuerySchema);
    const { rows, total } = q.environment === 'production' ? await listAlerts(deps.db, q) : { rows: [], total: 0 };
    ctx.body = ok({ alerts: rows.map(presentAlert), total, limit: q.limit, offset: q.offset });
  };
  router.get('/v1/query/alerts', deps.readAuth, list);
  router.get('/v1/alerts', deps.readAuth, list);
  router.get('/v1/query/alerts/:alert_id', deps.readAuth, async (ctx) => {
    const { site_id } = siteQuery(ctx, AlertDetailQuerySchema);
    // A malformed id is answered like a missing one, as for issues.
    const id = Uuid().safeParse(ctx.params.alert_id);
    const alert = id.success ? await findAlert(deps.db, site_id, id.data) : undefined;
    if (!alert) throw new NotFoundError('alert not found');
    ctx.body = ok(presentAlert(alert));
  });
  return router;
}
