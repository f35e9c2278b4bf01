/**
 * Issue 31, item 3: alert notifications in order per (endpoint, alert). A trigger that fails at first is retried
 * on its own schedule; before, the resolve queued meanwhile went out at once and the trigger's retry landed after
 * it, opening a PagerDuty incident nothing closed. Now a later delivery of an alert to one target waits while an
 * earlier one is pending. Real dispatcher and receivers on 127.0.0.1; the clock is moved to reach the retry.
 */
import test from 'ava';
import { encode } from '../../shared/contracts/codec.ts';
import { newId } from '../../shared/ids.ts';
import { alertNotification, type Alert } from '../../shared/notify/alert.ts';
import { created } from '../../shared/testing/http-client.ts';
import type { TestStack } from '../testing/stack.ts';
import { clockedDispatcher } from '../testing/dispatcher-stack.ts';
import { checkoutBudgetRule } from '../testing/alert-routing.ts';
import { startReceiver } from '../testing/webhook-receiver.ts';
import { eventually } from '../../shared/testing/eventually.ts';

/** Publishes an alert event as the outbox relay would (notify.v1.<kind>, notification_id = the row's msg id). */
async function publish(
  stack: TestStack,
  kind: 'alert.triggered' | 'alert.resolved',
  alert: Alert,
  at: number,
): Promise<void> {
  const m = alertNotification(kind, alert, new Date(at));
  await stack.infra.bus.publish(
    stack.infra.topology.notifySubject(kind),
    encode({ ...(m.payload as object), notification_id: m.msgId }),
    m.msgId,
  );
}

test('a trigger that fails first is retried, and the resolve queued meanwhile waits for it: the last event the webhook and PagerDuty see is the resolve', async (t) => {
  // Each receiver fails the first trigger it gets, and accepts everything after.
  const failFirstTrigger = (isTrigger: (body: string) => boolean) => {
    let failed = false;
    return ({ body }: { body: string }) => {
      if (!failed && isTrigger(body)) {
        failed = true;
        return { status: 503 };
      }
      return { status: 202, body: '{"status":"success"}' };
    };
  };
  const webhook = await startReceiver(failFirstTrigger((b) => JSON.parse(b).type === 'alert.triggered'));
  const pd = await startReceiver(failFirstTrigger((b) => JSON.parse(b).event_action === 'trigger'));
  const { stack, tenant, api, now, advance } = await clockedDispatcher(t, {
    PAGERDUTY_EVENTS_URL: `${pd.url}/v2/enqueue`,
  });
  t.teardown(() => Promise.all([webhook.close(), pd.close()]));
  const db = stack.infra.database.db;
  const token = tenant.owner.token;
  await created(api, '/v1/manage/webhooks', token, {
    org_id: tenant.orgId,
    url: `${webhook.url}/in`,
    events: ['alert.triggered', 'alert.resolved'],
  });
  const ruleId = await checkoutBudgetRule(api, tenant, ['webhook', 'pagerduty'], { config: {} });

  const fired: Alert = {
    id: newId(),
    site_id: tenant.siteId,
    rule_id: ruleId,
    rule_name: 'Checkout budget',
    page: '/checkout',
    trigger_type: 'budget',
    score_before: 10,
    score_after: 80,
    status: 'fired',
    details: { summary: 'over budget' },
    triggered_at: new Date(now()),
    acknowledged_at: null,
    resolved_at: null,
    resolved_reason: null,
  };
  const attempts = async (type: string, status?: string) =>
    (
      await db
        .selectFrom('delivery_attempts as a')
        .innerJoin('notification_deliveries as d', 'd.id', 'a.delivery_id')
        .select('a.id')
        .where('d.event_type', '=', type)
        .$if(status !== undefined, (q) => q.where('a.status', '=', status!))
        .execute()
    ).length;

  await publish(stack, 'alert.triggered', fired, now());
  await eventually(async () => (await attempts('alert.triggered', 'failed')) === 2, {
    timeoutMs: 20_000,
    what: 'both first trigger attempts failed',
  });
  // Resolved while the trigger waits for its retry (5 s).
  advance(1000);
  await publish(
    stack,
    'alert.resolved',
    { ...fired, status: 'resolved', resolved_at: new Date(now()), resolved_reason: 'score back under budget' },
    now(),
  );
  await eventually(
    async () =>
      (await db.selectFrom('notification_deliveries').select('id').where('event_type', '=', 'alert.resolved').execute())
        .length === 2,
    { timeoutMs: 20_000, what: 'resolve fanned out' },
  );
  stack.dispatcher!.wake();
  // Until the trigger's retry is due, nothing is sent: give the senders a few cycles to (wrongly) send the resolve.
  for (let i = 0; i < 5; i++) {
    stack.dispatcher!.wake();
    await new Promise((r) => setTimeout(r, 200));
  }
  t.is(await attempts('alert.resolved'), 0, 'the resolve waits for its trigger');

  advance(5000);
  await eventually(
    async () => {
      stack.dispatcher!.wake();
      return (await attempts('alert.resolved', 'succeeded')) === 2;
    },
    { timeoutMs: 30_000, what: 'resolve delivered to both' },
  );
  const order = (bodies: string[], f: (b: any) => string) => bodies.map((b) => f(JSON.parse(b)));
  t.deepEqual(
    order(
      webhook.received.map((r) => r.body),
      (b) => b.type,
    ),
    ['alert.triggered', 'alert.triggered', 'alert.resolved'],
  );
  t.deepEqual(
    order(
      pd.received.map((r) => r.body),
      (b) => b.event_action,
    ),
    ['trigger', 'trigger', 'resolve'],
  );
  t.deepEqual(
    webhook.received.map((r) => r.status),
    [503, 202, 202],
  );
});
