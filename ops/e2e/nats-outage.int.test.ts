import test from 'ava';
import { startPrivateNats } from '../../shared/testing/nats-server.ts';
import { startTestStack } from '../testing/stack.ts';
import { sdkBatch } from '../testing/sdk-batch.ts';
import { eventually } from '../../shared/testing/eventually.ts';
import { getJson, postJson } from '../../shared/testing/http-client.ts';

test('with NATS stopped, ingest answers 503 with Retry-After and never 202; it recovers when NATS returns', async (t) => {
  const nats = await startPrivateNats();
  const stack = await startTestStack({ env: { NATS_URL: nats.url } });
  t.teardown(async () => {
    await stack.stop();
    await nats.dispose();
  });
  const ingest = () =>
    postJson(`${stack.baseUrl}/v1/ingest`, sdkBatch(), { authorization: `Bearer ${stack.tenant.publishableKey}` });
  t.is((await ingest()).status, 202);

  await nats.stop();
  const down = await eventually(async () => {
    const r = await ingest();
    t.not(r.status, 202, 'no 202 without a durable publish');
    return r.status === 503 ? r : undefined;
  });
  t.is(down.body.error.code, 'unavailable');
  t.regex(down.headers.get('retry-after') ?? '', /^\d+$/);
  t.is((await getJson(`${stack.baseUrl}/readyz`)).status, 503);

  await nats.start();
  await eventually(async () => (await ingest()).status === 202, { timeoutMs: 20_000, stepMs: 250 });
  t.is((await getJson(`${stack.baseUrl}/readyz`)).status, 200);
});
