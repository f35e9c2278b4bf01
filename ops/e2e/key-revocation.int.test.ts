import test, { type ExecutionContext } from 'ava';
import { loadConfig } from '../../shared/config.ts';
import { createLogger } from '../../shared/logger.ts';
import { closeInfra, openInfra } from '../../shared/infra.ts';
import { ingestRole } from '../../ingest/main.ts';
import { serveRoles, closeServer } from '../server.ts';
import { startTestStack } from '../testing/stack.ts';
import { sdkBatch } from '../testing/sdk-batch.ts';
import { eventually } from '../../shared/testing/eventually.ts';
import { postJson } from '../../shared/testing/http-client.ts';

/** A stack plus a second ingest replica: its own process state (key cache with a 10-minute TTL), the same NATS and database. */
async function stackWithReplica(t: ExecutionContext) {
  const stack = await startTestStack();
  const config = loadConfig({}, { ...stack.config, PORT: '0', KEY_CACHE_TTL_MS: '600000' } as Record<string, unknown>);
  const log = createLogger('silent');
  const replica = await openInfra(config, log);
  const server = await serveRoles('ingest', [ingestRole(replica)], log, 0, '127.0.0.1');
  t.teardown(async () => {
    await closeServer(server);
    await closeInfra(replica);
    await stack.stop();
  });
  const port = (server.address() as { port: number }).port;
  const send = () =>
    postJson(`http://127.0.0.1:${port}/v1/ingest`, sdkBatch(), {
      authorization: `Bearer ${stack.tenant.publishableKey}`,
    });
  t.is((await send()).status, 202, 'the replica has now cached the key');
  /** The replica's first answer with `status`: the change reaches it at once (well within its cache TTL). */
  const sendUntil = (status: number) =>
    eventually(
      async () => {
        const r = await send();
        return r.status === status ? r : undefined;
      },
      { timeoutMs: 3000, stepMs: 50, what: `the replica answers ${status}` },
    );
  return { stack, send, sendUntil };
}

test('revoking a key stops a second ingest replica at once, not after its cache TTL', async (t) => {
  const { stack, sendUntil } = await stackWithReplica(t);

  const keys = await fetch(`${stack.baseUrl}/v1/manage/keys?site_id=${stack.tenant.siteId}`, {
    headers: { authorization: `Bearer ${stack.tenant.owner.token}` },
  });
  const list = (await keys.json()).data;
  const items = Array.isArray(list) ? list : list.keys;
  const pub = items.find((k: { key_type: string }) => k.key_type === 'publishable');
  const revoke = await fetch(`${stack.baseUrl}/v1/manage/keys/${pub.id}`, {
    method: 'DELETE',
    headers: { authorization: `Bearer ${stack.tenant.owner.token}` },
  });
  t.is(revoke.status, 200);
  const refused = await sendUntil(401);
  t.is(refused.body.error.code, 'unauthorized');
});

test('pausing a site makes every ingest replica refuse its batches at once (403); resuming lets them in', async (t) => {
  const { stack, send, sendUntil } = await stackWithReplica(t);
  const patch = (status: string) =>
    fetch(`${stack.baseUrl}/v1/manage/site/${stack.tenant.siteId}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${stack.tenant.owner.token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ status }),
    });
  t.is((await patch('paused')).status, 200);
  const refused = await sendUntil(403);
  t.is(refused.body.error.code, 'forbidden');
  t.regex(refused.body.error.message, /paused/);
  const direct = await postJson(`${stack.baseUrl}/v1/ingest`, sdkBatch(), {
    authorization: `Bearer ${stack.tenant.publishableKey}`,
  });
  t.is(direct.status, 403, "the stack's own ingest refuses too");
  // Reads keep working while paused.
  const scores = await fetch(`${stack.baseUrl}/v1/query/scores?site_id=${stack.tenant.siteId}`, {
    headers: { authorization: `Bearer ${stack.tenant.secretKey}` },
  });
  t.is(scores.status, 200);

  t.is((await patch('degraded')).status, 200);
  await sendUntil(202);
  t.is((await patch('active')).status, 200);
  t.is((await send()).status, 202);
});
