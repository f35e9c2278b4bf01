import test from 'ava';
import { jetstreamManager } from '@nats-io/jetstream';
import { JetStreamBus } from '../../shared/bus/jetstream-bus.ts';
import { startTestStack } from '../testing/stack.ts';
import { sdkBatch } from '../testing/sdk-batch.ts';
import { postJson } from '../../shared/testing/http-client.ts';

test('EVENTS at its byte limit (discard new): ingest answers 503 with Retry-After, never 202 for what the stream refused; room again, 202 again', async (t) => {
  const stack = await startTestStack({ processor: false });
  t.teardown(() => stack.stop());
  const bus = stack.infra.bus as JetStreamBus;
  const jsm = await jetstreamManager(bus.nc);
  const stream = stack.infra.topology.eventsStream;
  // An operator's cap (the NATS server's own storage limit, max_file_store, acts the same): a few batches' worth.
  const info = await jsm.streams.info(stream);
  t.is(info.config.discard, 'new', 'EVENTS refuses at a limit instead of dropping what it holds');
  await jsm.streams.update(stream, { ...info.config, max_bytes: 8 * 1024 });

  const ingest = () =>
    postJson(`${stack.baseUrl}/v1/ingest`, sdkBatch({ events: 5 }), {
      authorization: `Bearer ${stack.tenant.publishableKey}`,
    });
  const answers: string[] = [];
  for (let i = 0; i < 40; i++) {
    const r = await ingest();
    const retryAfter = /^\d+$/.test(r.headers.get('retry-after') ?? '') ? 'Retry-After' : 'no Retry-After';
    answers.push(r.status === 503 ? `503 ${r.body.error.code} ${retryAfter}` : String(r.status));
  }
  const accepted = answers.filter((a) => a === '202').length;
  t.true(accepted > 0);
  t.deepEqual(
    answers.filter((a) => a !== '202'),
    Array(40 - accepted).fill('503 unavailable Retry-After'),
    'every refusal is a 503 the SDK retries after Retry-After',
  );
  // Full: the last batches are all refused (a batch a few bytes smaller may still fit just after the first refusal).
  t.deepEqual(answers.slice(-10), Array(10).fill('503 unavailable Retry-After'));
  // The stream holds exactly what was answered 202: nothing accepted that it did not store.
  t.is((await jsm.streams.info(stream)).state.messages, accepted);

  // With room again (the cap raised, or old messages past max_age removed), ingest accepts again.
  await jsm.streams.update(stream, { ...info.config, max_bytes: -1 });
  t.is((await ingest()).status, 202);
  t.is((await jsm.streams.info(stream)).state.messages, accepted + 1);
});
