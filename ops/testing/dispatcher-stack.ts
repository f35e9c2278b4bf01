/**
 * Test-only: a dispatcher-only stack on a clock the test moves (nothing comes due until it does), and issue events
 * published to NOTIFY.
 */
import { apiClient } from '../../shared/testing/http-client.ts';
import type { ExecutionContext } from 'ava';
import { encode } from '../../shared/contracts/codec.ts';
import { newId } from '../../shared/ids.ts';

import { startTestStack } from './stack.ts';

/** `env` is added to the stack's (outbound calls to private networks are allowed: receivers run on 127.0.0.1). */
export async function clockedDispatcher(t: ExecutionContext, env: Record<string, string> = {}) {
  const start = Math.floor(Date.now() / 1000) * 1000;
  let clock = start;
  const stack = await startTestStack({
    processor: false,
    dispatcher: true,
    now: () => clock,
    random: () => 0.5,
    env: { OUTBOUND_ALLOW_PRIVATE_NETWORKS: 'true', ...env },
  });
  t.teardown(() => stack.stop());
  const { tenant } = stack;
  /** Moves the clock `ms` on and wakes the dispatcher. */
  const advance = (ms: number) => {
    clock += ms;
    stack.dispatcher!.wake();
  };
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
  return { start, now: () => clock, advance, stack, tenant, api: apiClient(stack.baseUrl), publishIssues };
}
