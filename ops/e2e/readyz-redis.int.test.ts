/**
 * /readyz reports Redis (issue 28, item 3). With Redis unreachable the limiter holds limits per process, so the
 * process still serves: the check says `degraded` and the answer stays 200, rather than staying silently green or
 * taking every replica out of its load balancer.
 */
import test from 'ava';
import { freePort } from '../../shared/testing/processes.ts';
import { startTestStack } from '../testing/stack.ts';
import { eventually } from '../../shared/testing/eventually.ts';
import { getJson } from '../../shared/testing/http-client.ts';

test('readyz: redis ok when it answers, degraded (still 200) when it does not', async (t) => {
  const up = await startTestStack({ processor: false });
  t.teardown(() => up.stop());
  // The connection opens in the background: ok once it is up.
  const ready = await eventually(
    async () => {
      const r = await getJson(`${up.baseUrl}/readyz`);
      return r.body?.data?.checks?.redis === 'ok' ? r : undefined;
    },
    { timeoutMs: 20_000 },
  );
  t.is(ready.status, 200);

  const port = await freePort();
  const down = await startTestStack({ processor: false, env: { REDIS_URL: `redis://127.0.0.1:${port}` } });
  t.teardown(() => down.stop());
  const degraded = await getJson(`${down.baseUrl}/readyz`);
  t.is(degraded.status, 200, JSON.stringify(degraded.body));
  t.deepEqual(degraded.body.data.checks, { bus: 'ok', database: 'ok', redis: 'degraded' });
});
