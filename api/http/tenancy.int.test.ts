import test from 'ava';
import { apiClient, type Method } from '../../shared/testing/http-client.ts';
import {
  EXPECTED_ACCESS,
  REQUESTS,
  randomFixtures,
  tenantFixtures,
  tenantPrincipals,
} from '../../ops/testing/manage-fixtures.ts';
import { type TestTenant, useStack } from '../../ops/testing/stack.ts';

/**
 * Org B's credentials against org A's objects. Generated from REQUESTS (every authenticated route), so a new
 * route is covered as soon as it has a request builder, which the auth test demands.
 */
const stack = useStack(test, { processor: false });
const api = apiClient(stack);
let a: TestTenant;
let b: TestTenant;
const bCredentials: Record<string, string> = {};

test.serial.before(async () => {
  a = stack.tenant;
  b = await stack.newTenant();
  await stack.infra.database.db.updateTable('orgs').set({ plan: 'enterprise' }).where('id', '=', a.orgId).execute();
  Object.assign(bCredentials, await tenantPrincipals(stack, b));
});

test.serial(
  "org B against org A's objects: byte-identical to a random id, 404 wherever B's credential may use the route",
  async (t) => {
    const aFx = tenantFixtures(stack, a);
    const odd: string[] = [];
    let compared = 0;
    for (const route of Object.keys(REQUESTS).sort()) {
      // JSON-RPC answers another tenant's object inside the protocol (a tool result with isError "site not found",
      // identical to a random id's), never as HTTP 404: ops/e2e/mcp.int.test.ts covers it.
      if (route === 'POST /v1/mcp') continue;
      const [method] = route.split(' ') as [Method, string];
      for (const [letter, token] of Object.entries(bCredentials)) {
        const foreign = await REQUESTS[route](aFx);
        const random = await REQUESTS[route](randomFixtures());
        const rf = await api(method, foreign.path, { token, body: foreign.body });
        const rr = await api(method, random.path, { token, body: random.body });
        compared++;
        // Users: tenancy comes before role, so every role sees 404. Keys: a scope the key lacks is a property of
        // the key alone (403 for any object); with the scope, 404.
        const expected = 'OAMV'.includes(letter) || EXPECTED_ACCESS[route].includes(letter) ? 404 : 403;
        if (rf.status !== expected)
          odd.push(`${route} ${letter}: ${rf.status} (expected ${expected}) ${rf.text.slice(0, 120)}`);
        if (rf.text !== rr.text || rf.status !== rr.status)
          odd.push(`${route} ${letter}: differs from a random id: ${rf.text} vs ${rr.text}`);
      }
    }
    t.deepEqual(odd, []);
    t.true(compared > 250);
  },
);

test.serial("lists of B hold none of A's rows", async (t) => {
  const aFx = tenantFixtures(stack, a);
  // Give A one object of every kind, and audit entries.
  for (const make of [aFx.ruleId, aFx.alertId, aFx.issueId, aFx.memberId, aFx.webhookId, aFx.integrationId, aFx.keyId])
    await make();
  await api('POST', '/v1/annotations', { token: a.owner.token, body: { site_id: a.siteId, message: 'A only' } });
  const aIds = [a.orgId, a.siteId, ...aFx.created];
  const bFx = tenantFixtures(stack, b);
  const leaks: string[] = [];
  let lists = 0;
  for (const route of Object.keys(REQUESTS).filter((r) => r.startsWith('GET ') && !r.includes('/:'))) {
    for (const [letter, token] of Object.entries(bCredentials)) {
      const req = await REQUESTS[route](bFx);
      const res = await api('GET', req.path, { token });
      if (res.status !== 200) continue;
      lists++;
      for (const id of aIds) if (res.text.includes(id)) leaks.push(`${route} ${letter} shows ${id}`);
    }
  }
  t.deepEqual(leaks, []);
  t.true(lists >= 60, `only ${lists} lists answered`);
});
