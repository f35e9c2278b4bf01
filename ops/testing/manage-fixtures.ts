/**
 * Test-only: objects of one tenant, made directly in the database (fast, and independent of the routes under
 * test), and request builders for every authenticated API route. A route without a builder fails the auth
 * and cross-tenant tables, so every new route gets covered.
 */
import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import type { TestStack, TestTenant } from './stack.ts';
import { issueApiKey, provisionSite } from '../../shared/tenancy/provision.ts';
import { createMember } from '../../shared/tenancy/accounts.ts';
import { opsRouter } from '../../shared/http/ops-routes.ts';
import { insertAlertRow } from './alert-row.ts';
import { insertSessionRow } from './rows.ts';

/**
 * What fixtures make on demand, each call a new object (DELETE and state changes need their own): objects kept per
 * site, and the rest.
 */
const PER_SITE = ['ruleId', 'alertId', 'issueId', 'deployId', 'integrationId'] as const;
const OTHERS = ['memberId', 'webhookId', 'keyId', 'newSiteId'] as const;
type Made = Record<(typeof PER_SITE)[number] | (typeof OTHERS)[number], () => Promise<string>>;

export interface Fixtures extends Made {
  orgId: string;
  siteId: string;
  /** A page the site has scored (read routes about one page answer 404 for a page never scored). */
  scoredPage(): Promise<string>;
  /** A stored session of the site. */
  sessionId(): Promise<string>;
  /** A page with a stored desktop screenshot. */
  screenshotPage(): Promise<string>;
  /** Removes the base site's integrations, so a connect is not a duplicate. */
  clearIntegrations(): Promise<void>;
}

/** Ids that exist nowhere: what another tenant's ids must be indistinguishable from. */
export function randomFixtures(): Fixtures {
  const id = async () => randomUUID();
  return {
    ...(Object.fromEntries([...PER_SITE, ...OTHERS].map((k) => [k, id])) as Made),
    scoredPage: async () => '/checkout',
    sessionId: id,
    screenshotPage: async () => '/shot',
    orgId: randomUUID(),
    siteId: randomUUID(),
    clearIntegrations: async () => {},
  };
}

export function tenantFixtures(stack: TestStack, tenant: TestTenant): Fixtures & { created: string[] } {
  const db = stack.infra.database.db;
  const created: string[] = [];
  const track = (id: string) => (created.push(id), id);
  /** A new id, tracked, once `insert` has stored the row that has it. */
  const made = async (insert: (id: string) => Promise<unknown>) => {
    const id = track(randomUUID());
    await insert(id);
    return id;
  };
  return {
    orgId: tenant.orgId,
    siteId: tenant.siteId,
    created,
    ruleId: () =>
      made((id) =>
        db
          .insertInto('alert_rules')
          .values({
            id,
            site_id: tenant.siteId,
            name: `rule ${id.slice(0, 4)}`,
            trigger_type: 'spike',
            threshold: 10,
            cooldown_minutes: 60,
            channels: ['email'],
            page_pattern: '/checkout*',
            enabled: true,
          })
          .execute(),
      ),
    alertId: () => made((id) => insertAlertRow(db, tenant.siteId, { id })),
    issueId: () =>
      made((id) => {
        const now = new Date();
        return sql`
        insert into ux_issues (id, site_id, page, cluster_selector, selector, signal_type, title, hypothesis, signal_count, affected_sessions, severity, first_signal_at, last_signal_at)
        values (${id}, ${tenant.siteId}, '/checkout', ${`#pay-${id}`}, ${`#pay-${id}`}, 'rage_click', 'Rage clicks on Pay', 'The button does not answer', 12, 5, 40, ${now}, ${now})`.execute(
          db,
        );
      }),
    async memberId() {
      const userId = await createMember(db, {
        orgId: tenant.orgId,
        email: `m-${randomUUID()}@test.example`,
        passwordHash: 'scrypt$1024$8$3$x$y',
        role: 'viewer',
      });
      const m = await db.selectFrom('memberships').select('id').where('user_id', '=', userId).executeTakeFirstOrThrow();
      return track(m.id);
    },
    webhookId: () =>
      made((id) =>
        db
          .insertInto('webhook_endpoints')
          .values({
            id,
            org_id: tenant.orgId,
            site_id: tenant.siteId,
            url: 'https://hooks.test.example/x',
            events: ['alert.triggered'],
            active: true,
            secret_sealed: 'v1.x.y.z',
          })
          .execute(),
      ),
    async integrationId() {
      await db
        .deleteFrom('integrations')
        .where('site_id', '=', tenant.siteId)
        .where('provider', '=', 'linear')
        .execute();
      return made((id) =>
        db
          .insertInto('integrations')
          .values({
            id,
            org_id: tenant.orgId,
            site_id: tenant.siteId,
            provider: 'linear',
            config: JSON.stringify({ team_id: 'ENG' }),
            secret_fields: ['api_key'],
            secrets_sealed: 'v1.x.y.z',
          })
          .execute(),
      );
    },
    async keyId() {
      return track(
        (await issueApiKey(db, { orgId: tenant.orgId, siteId: tenant.siteId, type: 'secret', scopes: ['query:read'] }))
          .id,
      );
    },
    deployId: () =>
      made((id) =>
        db
          .insertInto('deploys')
          .values({
            id,
            site_id: tenant.siteId,
            environment: 'production',
            version: `v-${id.slice(0, 8)}`,
            confusion_before: 20,
            recorded_at: new Date(),
            created_by: 'fixture',
          })
          .execute(),
      ),
    async newSiteId() {
      return track(
        (await provisionSite(db, { orgId: tenant.orgId, name: 'extra', url: 'https://extra.example' })).siteId,
      );
    },
    async scoredPage() {
      const now = new Date();
      await sql`
        insert into page_scores (site_id, page, window_start, score, friction, sessions, page_views, signal_count, dominant_signal, trend, updated_at)
        values (${tenant.siteId}, '/checkout', date_trunc('hour', ${now}::timestamptz), 42, 1, 3, 3, 2, 'rage_click', 'stable', ${now})
        on conflict do nothing`.execute(db);
      return '/checkout';
    },
    async screenshotPage() {
      // A 1x1 PNG stands for a capture: the auth table checks who may read it, not Chromium.
      const png = Buffer.from(
        'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
        'base64',
      );
      await sql`
        insert into page_screenshots (site_id, page, device, width, height, png, failure, captured_at)
        values (${tenant.siteId}, '/shot', 'desktop', 1280, 800, ${png}, null, now())
        on conflict do nothing`.execute(db);
      return '/shot';
    },
    async sessionId() {
      const id = track(`fx-${randomUUID()}`);
      await insertSessionRow(db, { siteId: tenant.siteId, id, page: '/checkout', views: 0 });
      return id;
    },
    async clearIntegrations() {
      await db.deleteFrom('integrations').where('site_id', '=', tenant.siteId).execute();
    },
  };
}

export interface BuiltRequest {
  path: string;
  body?: unknown;
}
export type RequestBuilder = (f: Fixtures) => Promise<BuiltRequest>;

const u = () => randomUUID().slice(0, 8);

/**
 * A valid request for every authenticated route, keyed `METHOD path` as the router declares it. A builder
 * answers 2xx for a principal the route admits, so the tables show real successes, not merely passed auth.
 */
export const REQUESTS: Record<string, RequestBuilder> = {
  // read routes (api/routes/{scores,issues,elements,heuristics}) and the audit log
  'GET /v1/query/scores': async (f) => ({ path: `/v1/query/scores?site_id=${f.siteId}` }),
  'GET /v1/scores': async (f) => ({ path: `/v1/scores?site_id=${f.siteId}` }),
  'GET /v1/query/alerts': async (f) => ({ path: `/v1/query/alerts?site_id=${f.siteId}` }),
  'GET /v1/query/degradation': async (f) => ({ path: `/v1/query/degradation?org_id=${f.orgId}` }),
  'GET /v1/query/webhook-deliveries': async (f) => ({ path: `/v1/query/webhook-deliveries?org_id=${f.orgId}` }),
  'GET /v1/alerts': async (f) => ({ path: `/v1/alerts?site_id=${f.siteId}` }),
  'GET /v1/query/raw': async (f) => ({ path: `/v1/query/raw?site_id=${f.siteId}&table=events` }),
  'GET /v1/raw': async (f) => ({ path: `/v1/raw?site_id=${f.siteId}&table=sessions` }),
  'GET /v1/query/alerts/:alert_id': async (f) => ({
    path: `/v1/query/alerts/${await f.alertId()}?site_id=${f.siteId}`,
  }),
  'GET /v1/query/issues': async (f) => ({ path: `/v1/query/issues?site_id=${f.siteId}` }),
  'GET /v1/issues': async (f) => ({ path: `/v1/issues?site_id=${f.siteId}` }),
  'GET /v1/query/issues/:issue_id': async (f) => ({
    path: `/v1/query/issues/${await f.issueId()}?site_id=${f.siteId}`,
  }),
  'GET /v1/issues/:issue_id': async (f) => ({ path: `/v1/issues/${await f.issueId()}?site_id=${f.siteId}` }),
  'GET /v1/query/elements': async (f) => ({ path: `/v1/query/elements?site_id=${f.siteId}` }),
  'GET /v1/elements': async (f) => ({ path: `/v1/elements?site_id=${f.siteId}` }),
  'GET /v1/query/heuristics': async (f) => ({ path: `/v1/query/heuristics?site_id=${f.siteId}` }),
  'GET /v1/query/deploys': async (f) => ({ path: `/v1/query/deploys?site_id=${f.siteId}` }),
  'GET /v1/query/mcp/context': async (f) => ({ path: `/v1/query/mcp/context?site_id=${f.siteId}` }),
  'GET /v1/mcp/context': async (f) => ({ path: `/v1/mcp/context?site_id=${f.siteId}` }),
  'POST /v1/mcp': async () => ({ path: '/v1/mcp', body: { jsonrpc: '2.0', id: 1, method: 'tools/list' } }),
  'GET /v1/deploys': async (f) => ({ path: `/v1/deploys?site_id=${f.siteId}&environment=staging` }),
  'GET /v1/query/deploys/:deploy_id': async (f) => ({
    path: `/v1/query/deploys/${await f.deployId()}?site_id=${f.siteId}`,
  }),
  'GET /v1/deploys/:deploy_id': async (f) => ({ path: `/v1/deploys/${await f.deployId()}?site_id=${f.siteId}` }),
  'POST /v1/deploys': async (f) => ({ path: '/v1/deploys', body: { site_id: f.siteId, version: `v${u()}` } }),
  'POST /v1/manage/deploys': async (f) => ({
    path: '/v1/manage/deploys',
    body: { site_id: f.siteId, version: `v${u()}`, environment: 'staging' },
  }),
  'GET /v1/query/audit': async (f) => ({ path: `/v1/query/audit?org_id=${f.orgId}` }),
  // read routes of api/routes/{pages,sessions,heatmaps,journeys,revenue,insights,export}
  'GET /v1/query/page': async (f) => ({ path: `/v1/query/page?site_id=${f.siteId}&page=${await f.scoredPage()}` }),
  'GET /v1/page': async (f) => ({ path: `/v1/page?site_id=${f.siteId}&page=${await f.scoredPage()}` }),
  'GET /v1/query/trends': async (f) => ({ path: `/v1/query/trends?site_id=${f.siteId}&days=30` }),
  'GET /v1/trends': async (f) => ({ path: `/v1/trends?site_id=${f.siteId}` }),
  'GET /v1/query/compare': async (f) => ({
    path: `/v1/query/compare?site_id=${f.siteId}&a=${await f.scoredPage()}&b=${await f.scoredPage()}`,
  }),
  'GET /v1/compare': async (f) => ({
    path: `/v1/compare?site_id=${f.siteId}&a=${await f.scoredPage()}&b=${await f.scoredPage()}`,
  }),
  'GET /v1/query/session': async (f) => ({
    path: `/v1/query/session?site_id=${f.siteId}&session_id=${await f.sessionId()}`,
  }),
  'GET /v1/session': async (f) => ({ path: `/v1/session?site_id=${f.siteId}&session_id=${await f.sessionId()}` }),
  'GET /v1/query/element-heatmap': async (f) => ({
    path: `/v1/query/element-heatmap?site_id=${f.siteId}&page=/checkout&selector=%23pay`,
  }),
  'GET /v1/query/page-heatmap': async (f) => ({
    path: `/v1/query/page-heatmap?site_id=${f.siteId}&page=/checkout&device=mobile`,
  }),
  'GET /v1/query/page-screenshot': async (f) => ({
    path: `/v1/query/page-screenshot?site_id=${f.siteId}&page=/checkout&cached=1`,
  }),
  'GET /v1/query/page-screenshot/image': async (f) => ({
    path: `/v1/query/page-screenshot/image?site_id=${f.siteId}&page=${await f.screenshotPage()}`,
  }),
  'GET /v1/query/flows': async (f) => ({ path: `/v1/query/flows?site_id=${f.siteId}` }),
  'GET /v1/flows': async (f) => ({ path: `/v1/flows?site_id=${f.siteId}` }),
  'GET /v1/query/journeys/friction': async (f) => ({ path: `/v1/query/journeys/friction?site_id=${f.siteId}` }),
  'GET /v1/query/recommendations': async (f) => ({ path: `/v1/query/recommendations?site_id=${f.siteId}` }),
  'GET /v1/recommendations': async (f) => ({ path: `/v1/recommendations?site_id=${f.siteId}` }),
  'GET /v1/query/revenue': async (f) => ({ path: `/v1/query/revenue?site_id=${f.siteId}` }),
  'GET /v1/revenue': async (f) => ({ path: `/v1/revenue?site_id=${f.siteId}` }),
  'GET /v1/query/insights': async (f) => ({ path: `/v1/query/insights?site_id=${f.siteId}` }),
  'GET /v1/query/export/events.csv': async (f) => ({ path: `/v1/query/export/events.csv?site_id=${f.siteId}` }),
  'GET /v1/export/events.csv': async (f) => ({ path: `/v1/export/events.csv?site_id=${f.siteId}` }),
  // sites
  'GET /v1/manage/site': async (f) => ({ path: `/v1/manage/site?org_id=${f.orgId}` }),
  'POST /v1/manage/site': async (f) => ({
    path: '/v1/manage/site',
    body: { org_id: f.orgId, name: `site ${u()}`, url: 'https://new.example' },
  }),
  'PATCH /v1/manage/site/:site_id': async (f) => ({
    path: `/v1/manage/site/${f.siteId}`,
    body: { name: `renamed ${u()}` },
  }),
  'DELETE /v1/manage/site/:site_id': async (f) => ({ path: `/v1/manage/site/${await f.newSiteId()}` }),
  // alert rules and their short forms
  'GET /v1/manage/alert-rules': async (f) => ({ path: `/v1/manage/alert-rules?site_id=${f.siteId}` }),
  'POST /v1/manage/alert-rules': async (f) => ({
    path: '/v1/manage/alert-rules',
    body: { site_id: f.siteId, trigger_type: 'spike', threshold: 25 },
  }),
  'POST /v1/alert-rules': async (f) => ({
    path: '/v1/alert-rules',
    body: { site_id: f.siteId, trigger_type: 'trend', threshold: 5, name: 'trend' },
  }),
  'PATCH /v1/manage/alert-rules/:rule_id': async (f) => ({
    path: `/v1/manage/alert-rules/${await f.ruleId()}`,
    body: { threshold: 30 },
  }),
  'PATCH /v1/alert-rules/:rule_id': async (f) => ({
    path: `/v1/alert-rules/${await f.ruleId()}`,
    body: { enabled: false },
  }),
  'DELETE /v1/manage/alert-rules/:rule_id': async (f) => ({ path: `/v1/manage/alert-rules/${await f.ruleId()}` }),
  'DELETE /v1/alert-rules/:rule_id': async (f) => ({ path: `/v1/alert-rules/${await f.ruleId()}` }),
  // alerts and issues
  'PATCH /v1/manage/alerts/:alert_id': async (f) => ({
    path: `/v1/manage/alerts/${await f.alertId()}`,
    body: { status: 'acknowledged' },
  }),
  'POST /v1/alerts/:alert_id': async (f) => ({
    path: `/v1/alerts/${await f.alertId()}`,
    body: { status: 'resolved', resolved_reason: 'fixed' },
  }),
  'PATCH /v1/manage/issues/:issue_id': async (f) => ({
    path: `/v1/manage/issues/${await f.issueId()}`,
    body: { status: 'triaged', note: 'looking' },
  }),
  'POST /v1/issues/:issue_id': async (f) => ({
    path: `/v1/issues/${await f.issueId()}`,
    body: { assigned_to: 'dana' },
  }),
  // members
  'GET /v1/manage/members': async (f) => ({ path: `/v1/manage/members?org_id=${f.orgId}` }),
  'POST /v1/manage/members': async (f) => ({
    path: '/v1/manage/members',
    body: { org_id: f.orgId, email: `i-${u()}@test.example`, role: 'viewer' },
  }),
  'POST /v1/manage/members/invite': async (f) => ({
    path: '/v1/manage/members/invite',
    body: { org_id: f.orgId, email: `i-${u()}@test.example`, role: 'member' },
  }),
  'PATCH /v1/manage/members/:member_id': async (f) => ({
    path: `/v1/manage/members/${await f.memberId()}`,
    body: { role: 'member' },
  }),
  'DELETE /v1/manage/members/:member_id': async (f) => ({ path: `/v1/manage/members/${await f.memberId()}` }),
  // webhooks
  'GET /v1/manage/webhooks': async (f) => ({ path: `/v1/manage/webhooks?site_id=${f.siteId}` }),
  'POST /v1/manage/webhooks': async (f) => ({
    path: '/v1/manage/webhooks',
    body: { org_id: f.orgId, site_id: f.siteId, url: 'https://hooks.test.example/new' },
  }),
  'POST /v1/manage/webhooks/:endpoint_id/test': async (f) => ({
    path: `/v1/manage/webhooks/${await f.webhookId()}/test`,
  }),
  'PATCH /v1/manage/webhooks/:endpoint_id': async (f) => ({
    path: `/v1/manage/webhooks/${await f.webhookId()}`,
    body: { enabled: false },
  }),
  'DELETE /v1/manage/webhooks/:endpoint_id': async (f) => ({ path: `/v1/manage/webhooks/${await f.webhookId()}` }),
  // integrations
  'GET /v1/manage/integrations': async (f) => ({ path: `/v1/manage/integrations?site_id=${f.siteId}` }),
  'POST /v1/manage/integrations': async (f) => {
    await f.clearIntegrations();
    return {
      path: '/v1/manage/integrations',
      body: { site_id: f.siteId, provider: 'pagerduty', config: { routing_key: 'a'.repeat(32) } },
    };
  },
  'DELETE /v1/manage/integrations/:id': async (f) => ({ path: `/v1/manage/integrations/${await f.integrationId()}` }),
  // sdk config
  'GET /v1/manage/sdk-config': async (f) => ({ path: `/v1/manage/sdk-config?site_id=${f.siteId}` }),
  'PATCH /v1/manage/sdk-config/:environment': async (f) => ({
    path: `/v1/manage/sdk-config/production?site_id=${f.siteId}`,
    body: { sample_rate: 0.5 },
  }),
  // keys
  'GET /v1/manage/keys': async (f) => ({ path: `/v1/manage/keys?site_id=${f.siteId}` }),
  'POST /v1/manage/keys': async (f) => ({
    path: '/v1/manage/keys',
    body: { site_id: f.siteId, key_type: 'secret', scopes: ['query:read'] },
  }),
  'DELETE /v1/manage/keys/:id': async (f) => ({ path: `/v1/manage/keys/${await f.keyId()}` }),
  // annotations and usage
  'POST /v1/annotations': async (f) => ({
    path: '/v1/annotations',
    body: { site_id: f.siteId, message: 'campaign started' },
  }),
  'POST /v1/manage/annotations': async (f) => ({
    path: '/v1/manage/annotations',
    body: { site_id: f.siteId, message: 'vendor outage' },
  }),
  'DELETE /v1/manage/sessions/:session_id': async (f) => ({
    path: `/v1/manage/sessions/${await f.sessionId()}?site_id=${f.siteId}`,
  }),
  'DELETE /v1/manage/visitors/:anonymous_id': async (f) => ({
    path: `/v1/manage/visitors/visitor-${randomUUID()}?site_id=${f.siteId}`,
  }),
  'GET /v1/query/explore': async (f) => ({
    path: `/v1/query/explore?site_id=${f.siteId}&q=${encodeURIComponent(JSON.stringify({ output: { mode: 'measure', metric: 'count' } }))}`,
  }),
  'POST /v1/query/explore': async (f) => ({
    path: `/v1/query/explore?site_id=${f.siteId}`,
    body: { output: { mode: 'measure', metric: 'count' } },
  }),
  'GET /v1/manage/annotations': async (f) => ({ path: `/v1/manage/annotations?site_id=${f.siteId}` }),
  'GET /v1/manage/usage': async (f) => ({ path: `/v1/manage/usage?org_id=${f.orgId}` }),
};

/** Routes anyone may call, or only a publishable key: outside the auth tables, checked on their own. */
export const UNAUTHENTICATED = new Set([
  'POST /v1/auth/signup',
  'POST /v1/auth/verify-email',
  'POST /v1/auth/login',
  'POST /v1/auth/accept-invite',
  'GET /v1/openapi.json',
  'POST /v1/ingest',
  'GET /v1/sdk.js',
  'GET /v1/sdk.mjs',
  'GET /v1/sdk-config',
  'GET /docs',
  'GET /docs/scalar.js',
  'GET /',
  'GET /assets/:name',
  'GET /demo-shop',
  'GET /demo-shop/:page',
  'POST /v1/auth/forgot-password',
  'POST /v1/auth/reset-password',
  'GET /healthz',
  'GET /readyz',
  'GET /metrics',
  // 405 to everyone: the stateless MCP server serves no stream and ends no session.
  'GET /v1/mcp',
  'DELETE /v1/mcp',
]);

/**
 * A user's own session (renew, logout, password change): user tokens only, no target object, and two of them end
 * the caller's session, which would sign the table's principals out. Covered in ops/e2e/security-sessions.int.test.ts.
 */
export const OWN_SESSION_ROUTES = new Set([
  'POST /v1/auth/refresh',
  'POST /v1/auth/logout',
  'POST /v1/auth/password',
  'GET /v1/auth/session',
]);

/** `METHOD path` of every route the stack serves (HEAD, the router's twin of GET, left out). */
export function servedRoutes(stack: TestStack): string[] {
  const out = new Set<string>();
  // serveRoles adds the operations routes to every role's routers.
  for (const r of [...stack.routers, opsRouter('test', [])])
    for (const layer of r.stack) for (const m of layer.methods) if (m !== 'HEAD') out.add(`${m} ${layer.path}`);
  return [...out].sort();
}

/**
 * Who gets through each route, in one letter per principal: O owner, A admin, M member, V viewer (user
 * tokens); S secret key with query:read + manage:write (the one issued with a site); R secret key with
 * query:read only; W secret key with webhook:write only; C MCP key (mcp:read); P publishable key.
 * Everyone else answers 403. The README's roles table says the same in words.
 */
const READ = 'OAMVSRC';
export const PRINCIPAL_LETTERS = 'OAMVSRWCP';

/**
 * A tenant's principals by letter (PRINCIPAL_LETTERS), its org moved to the enterprise plan so no site limit gets in
 * the way: O owner, A admin, M member, V viewer (user tokens); S its secret key, C an MCP key (mcp:read).
 */
export async function tenantPrincipals(stack: TestStack, t: TestTenant): Promise<Record<string, string>> {
  const db = stack.infra.database.db;
  await db.updateTable('orgs').set({ plan: 'enterprise' }).where('id', '=', t.orgId).execute();
  return {
    O: t.owner.token,
    A: (await stack.newUser(t, 'admin')).token,
    M: (await stack.newUser(t, 'member')).token,
    V: (await stack.newUser(t, 'viewer')).token,
    S: t.secretKey,
    C: (await issueApiKey(db, { orgId: t.orgId, siteId: t.siteId, type: 'mcp', scopes: ['mcp:read'] })).key,
  };
}
export const EXPECTED_ACCESS: Record<string, string> = {
  'GET /v1/query/scores': READ,
  'GET /v1/scores': READ,
  'GET /v1/query/alerts': READ,
  'GET /v1/query/degradation': READ,
  'GET /v1/query/webhook-deliveries': 'OASRC',
  'GET /v1/alerts': READ,
  'GET /v1/query/raw': READ,
  'GET /v1/raw': READ,
  'GET /v1/query/alerts/:alert_id': READ,
  'GET /v1/query/issues': READ,
  'GET /v1/issues': READ,
  'GET /v1/query/issues/:issue_id': READ,
  'GET /v1/issues/:issue_id': READ,
  'GET /v1/query/elements': READ,
  'GET /v1/elements': READ,
  'GET /v1/query/heuristics': READ,
  'GET /v1/query/deploys': READ,
  'GET /v1/query/mcp/context': READ,
  'GET /v1/mcp/context': READ,
  'POST /v1/mcp': READ,
  'GET /v1/deploys': READ,
  'GET /v1/query/deploys/:deploy_id': READ,
  'GET /v1/deploys/:deploy_id': READ,
  'POST /v1/deploys': 'OAMS',
  'POST /v1/manage/deploys': 'OAMS',
  'GET /v1/query/audit': 'OASRC',
  'GET /v1/query/page': READ,
  'GET /v1/page': READ,
  'GET /v1/query/trends': READ,
  'GET /v1/trends': READ,
  'GET /v1/query/compare': READ,
  'GET /v1/compare': READ,
  'GET /v1/query/session': READ,
  'GET /v1/session': READ,
  'GET /v1/query/element-heatmap': READ,
  'GET /v1/query/page-heatmap': READ,
  'GET /v1/query/page-screenshot': READ,
  'GET /v1/query/page-screenshot/image': READ,
  'GET /v1/query/flows': READ,
  'GET /v1/flows': READ,
  'GET /v1/query/journeys/friction': READ,
  'GET /v1/query/recommendations': READ,
  'GET /v1/recommendations': READ,
  'GET /v1/query/revenue': READ,
  'GET /v1/revenue': READ,
  'GET /v1/query/insights': READ,
  'GET /v1/query/export/events.csv': READ,
  'GET /v1/export/events.csv': READ,
  'GET /v1/manage/site': 'OAMVS',
  'POST /v1/manage/site': 'OA',
  'PATCH /v1/manage/site/:site_id': 'OAS',
  'DELETE /v1/manage/site/:site_id': 'OA',
  'GET /v1/manage/alert-rules': 'OAMVS',
  'POST /v1/manage/alert-rules': 'OAMS',
  'POST /v1/alert-rules': 'OAMS',
  'PATCH /v1/manage/alert-rules/:rule_id': 'OAMS',
  'PATCH /v1/alert-rules/:rule_id': 'OAMS',
  'DELETE /v1/manage/alert-rules/:rule_id': 'OAMS',
  'DELETE /v1/alert-rules/:rule_id': 'OAMS',
  'PATCH /v1/manage/alerts/:alert_id': 'OAMS',
  'POST /v1/alerts/:alert_id': 'OAMS',
  'PATCH /v1/manage/issues/:issue_id': 'OAMS',
  'POST /v1/issues/:issue_id': 'OAMS',
  'GET /v1/manage/members': 'OAMV',
  'POST /v1/manage/members': 'OA',
  'POST /v1/manage/members/invite': 'OA',
  'PATCH /v1/manage/members/:member_id': 'O',
  'DELETE /v1/manage/members/:member_id': 'O',
  'GET /v1/manage/webhooks': 'OAMVSW',
  'POST /v1/manage/webhooks': 'OASW',
  'PATCH /v1/manage/webhooks/:endpoint_id': 'OASW',
  'POST /v1/manage/webhooks/:endpoint_id/test': 'OASW',
  'DELETE /v1/manage/webhooks/:endpoint_id': 'OASW',
  'GET /v1/manage/integrations': 'OAMVS',
  'POST /v1/manage/integrations': 'OAS',
  'DELETE /v1/manage/integrations/:id': 'OAS',
  'GET /v1/manage/sdk-config': 'OAMVS',
  'PATCH /v1/manage/sdk-config/:environment': 'OAS',
  'GET /v1/manage/keys': 'OA',
  'POST /v1/manage/keys': 'OA',
  'DELETE /v1/manage/keys/:id': 'OA',
  'POST /v1/annotations': 'OAMS',
  'POST /v1/manage/annotations': 'OAMS',
  'DELETE /v1/manage/sessions/:session_id': 'OA',
  'DELETE /v1/manage/visitors/:anonymous_id': 'OA',
  'GET /v1/query/explore': READ,
  'POST /v1/query/explore': READ,
  'GET /v1/manage/annotations': 'OAMVS',
  'GET /v1/manage/usage': 'OAMVS',
};
