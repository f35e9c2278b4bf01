/** Test-only: a dispatcher-only stack on a fixed clock (no retry comes due), and issue events published to NOTIFY. */
import { apiClient } from '../../shared/testing/http-client.ts';
import type { ExecutionContext } from 'ava';
import { encode } from '../../shared/contracts/codec.ts';
import { newId } from '../../shared/ids.ts';

import { startTestStack } from './stack.ts';

export async function fixedClockDispatcher(t: ExecutionContext) {
  const clock = Math.floor(Date.now() / 1000) * 1000;
  const stack = await startTestStack({
    processor: false,
    dispatcher: true,
    now: () => clock,
    random: () => 0.5,
    env: { OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true' },
  });
  t.teardown(() => stack.stop());
  const { tenant } = stack;
  /** Publishes `n` notifications of `event` about new issues of the tenant's site. */
  const publishIssues = async (event: 'issue.created' | 'issue.updated', n: number, label: string) => {
    for (let i = 0; i < n; i++) {
      const id = `${event}:${label}-${i}:${newId()}`;
      await stack.infra.bus.publish(
        stack.infra.topology.notifySubject(event),
        encode({ event, notification_id: id, issue: { id: newId(), site_id: tenant.siteId, n: i } }),
        id,
      );
    }
  };
  return { clock, stack, tenant, api: apiClient(stack.baseUrl), publishIssues };
}
