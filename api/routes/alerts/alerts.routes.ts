import { ConflictError } from '../../../shared/errors.ts';
import { listPage } from '../../http/present.ts';
import { type ReadDeps, type ManageDeps } from '../../http/deps.ts';
import type { RouteTable } from '../../http/routes.ts';
import { presentAlert } from '../../read-models/alerts.presenter.ts';
import { findAlert, listAlerts, setAlertStatus } from './alerts.queries.ts';
import { AlertListQuerySchema, AlertListResponseSchema, AlertPatchSchema } from './alerts.schema.ts';
import { enqueueOutbox } from '../../../shared/notify/outbox.ts';
import { addObjectChange } from '../../http/object-change.ts';
import { alertNotification } from '../../../shared/notify/alert.ts';
import { alertTransition } from './alert-transitions.ts';
import { AlertSchema, type AlertStatus } from '../../read-models/alerts.schema.ts';

const NOT_FOUND = 'alert not found';
const STAGING_HAS_NONE =
  'Alert rules evaluate production traffic only, so environment=staging answers an empty list (staging has scores and issues, no alerts).';

/** `/v1/query/alerts` (and the short form `/v1/alerts`) and `/v1/query/alerts/:alert_id`: a site's alerts, newest first. */
export function alertReadRoutes(table: RouteTable, deps: ReadDeps): RouteTable {
  table.read({
    path: '/v1/query/alerts',
    shortForm: { summary: 'Alerts of a site (short form)', description: STAGING_HAS_NONE },
    tag: 'alerts',
    summary: 'Alerts of a site, newest first',
    description: STAGING_HAS_NONE,
    query: AlertListQuerySchema,
    response: AlertListResponseSchema,
    async handler(_ctx, { query: q }) {
      const found = q.environment === 'production' ? await listAlerts(deps.db, q) : { rows: [], total: 0 };
      return listPage('alerts', found, presentAlert, q);
    },
  });
  return table.readOne({
    path: '/v1/query/alerts/:alert_id',
    tag: 'alerts',
    summary: 'One alert',
    notFound: NOT_FOUND,
    response: AlertSchema,
    find: (query, id) => findAlert(deps.db, query.site_id, id),
    present: presentAlert,
  });
}

const ALERT_PATCH =
  'Forward only (fired → acknowledged → investigating → resolved, steps may be skipped); going back or reopening a resolved alert is 409 conflict; repeating the current status changes nothing. Acknowledged and resolved send alert.acknowledged / alert.resolved events (webhooks, Slack, PagerDuty, email) once the change committed, through the outbox, in order with the other events of the alert; investigating is recorded in the audit log only.';

/** PATCH /v1/manage/alerts/:alert_id and the short form POST /v1/alerts/:id: move an alert forward. */
export function alertRoutes(table: RouteTable, deps: ManageDeps): RouteTable {
  return addObjectChange(table, deps, {
    target: 'alert',
    table: 'alerts',
    summary: 'Acknowledge, investigate or resolve an alert',
    description: ALERT_PATCH,
    body: AlertPatchSchema,
    response: AlertSchema,
    async apply(trx, before, { id, body }) {
      const from = before.status as AlertStatus;
      const t = alertTransition(from, body.status);
      if (t.kind === 'refused') throw new ConflictError(t.reason);
      if (t.kind === 'unchanged') return { answer: presentAlert(before) };
      const now = deps.now();
      const after = await setAlertStatus(trx, id, {
        status: body.status,
        resolvedReason: body.resolved_reason ?? null,
        now,
      });
      const changes = {
        status: { from, to: body.status },
        ...(body.resolved_reason ? { resolved_reason: { from: null, to: body.resolved_reason } } : {}),
      };
      // alert.acknowledged / alert.resolved reach webhooks and the rule's channels through the outbox, in this
      // transaction: published after the commit (never for a change that rolled back), in order per alert.
      if (body.status === 'acknowledged' || body.status === 'resolved') {
        await enqueueOutbox(trx, [alertNotification(`alert.${body.status}`, after, now)]);
        return { answer: presentAlert(after), changes, queued: true };
      }
      return { answer: presentAlert(after), changes };
    },
  });
}
