/** Test-only: a tenant's alert routing, made through the API as its owner. */
import { created, type ApiCall } from '../../shared/testing/http-client.ts';
import type { TestTenant } from './stack.ts';

/**
 * A rule "Checkout budget" (a budget of 0: any scored page fires it) sending to `channels`, with `more` fields;
 * when the channels include PagerDuty, the site's PagerDuty integration is made first. Returns the rule's id.
 */
export async function checkoutBudgetRule(
  api: ApiCall,
  tenant: TestTenant,
  channels: string[],
  more: Record<string, unknown> = {},
): Promise<string> {
  const token = tenant.owner.token;
  if (channels.includes('pagerduty'))
    await created(api, '/v1/manage/integrations', token, {
      site_id: tenant.siteId,
      provider: 'pagerduty',
      config: { routing_key: 'R'.repeat(32) },
    });
  const rule = await created(api, '/v1/manage/alert-rules', token, {
    site_id: tenant.siteId,
    name: 'Checkout budget',
    trigger_type: 'budget',
    threshold: 0,
    channels,
    ...more,
  });
  return rule.id;
}
