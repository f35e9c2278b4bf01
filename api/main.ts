import type Router from '@koa/router';
import { databaseReady, limiterReadiness, type Infra } from '../shared/infra.ts';
import type { ReadinessCheck } from '../shared/http/ops-routes.ts';
import { managementPlane } from './plane.ts';
import { scoreRoutes } from './routes/scores/scores.routes.ts';
import { issueReadRoutes } from './routes/issues/issues.routes.ts';
import { elementRoutes } from './routes/elements/elements.routes.ts';
import { heuristicRoutes } from './routes/heuristics/heuristics.routes.ts';
import { alertReadRoutes } from './routes/alerts/alerts.routes.ts';
import { rawRoutes } from './routes/raw/raw.routes.ts';
import { pageRoutes } from './routes/pages/page.routes.ts';
import { sessionRoutes } from './routes/sessions/session.routes.ts';
import { heatmapRoutes } from './routes/heatmaps/heatmaps.routes.ts';
import { journeyRoutes } from './routes/journeys/journeys.routes.ts';
import { exportRoutes } from './routes/export/export.routes.ts';
import { revenueRoutes } from './routes/revenue/revenue.routes.ts';
import { insightRoutes } from './routes/revenue/insights.routes.ts';
import { deployReadRoutes } from './routes/deploys/deploys.routes.ts';
import { screenshotRoutes } from './routes/screenshots/screenshots.routes.ts';
import { ScreenshotCapturer, screenshotsEnabled } from './routes/screenshots/capturer.ts';
import { mcpAllowedOrigins, mcpRouter } from './mcp/mcp.routes.ts';
import { dashboardRouter } from './dashboard/dashboard.routes.ts';
import { demoShopRouter } from './http/demo-shop.ts';

/**
 * The api role: read, write, auth and audit routes, ready when the database and the bus answer. `stop` closes
 * what the role owns (the screenshot browser) after the server stopped taking requests.
 */
export function apiRole(infra: Infra): { routers: Router[]; checks: ReadinessCheck[]; stop(): Promise<void> } {
  // Auth (keys and user tokens), rate limits, every /manage, /auth and audit route, and /v1/openapi.json.
  const plane = managementPlane(infra);
  const cfg = infra.config;
  const capturer = screenshotsEnabled(cfg)
    ? new ScreenshotCapturer({
        db: infra.database.db,
        log: infra.log,
        policy: { allowPrivateNetworks: cfg.SCREENSHOT_ALLOW_PRIVATE_NETWORKS },
        executablePath: cfg.CHROMIUM_PATH,
        timeoutMs: cfg.SCREENSHOT_TIMEOUT_MS,
        perSiteDay: cfg.SCREENSHOTS_PER_SITE_PER_DAY,
        publicBaseUrl: cfg.PUBLIC_BASE_URL,
      })
    : undefined;
  // The read routes join the management plane's table: one auth, one validation path, one OpenAPI document.
  const reads = { db: infra.database.db, now: () => new Date() };
  for (const add of [
    scoreRoutes,
    issueReadRoutes,
    elementRoutes,
    alertReadRoutes,
    rawRoutes,
    pageRoutes,
    sessionRoutes,
    heatmapRoutes,
    journeyRoutes,
    revenueRoutes,
    insightRoutes,
    deployReadRoutes,
  ])
    add(plane.table, reads);
  exportRoutes(plane.table, { ...reads, log: infra.log });
  screenshotRoutes(plane.table, { ...reads, capturer, publicBaseUrl: cfg.PUBLIC_BASE_URL });
  heuristicRoutes(plane.table);
  return {
    routers: [
      mcpRouter({
        db: infra.database.db,
        log: infra.log,
        now: () => new Date(),
        guideAuth: plane.guideAuth,
        allowedOrigins: mcpAllowedOrigins(cfg),
        explore: { db: infra.database.db, kind: infra.database.kind, timeoutMs: cfg.EXPLORE_STATEMENT_TIMEOUT_MS },
      }),
      demoShopRouter(),
      ...plane.routers,
      dashboardRouter({
        log: infra.log,
        publicBaseUrl: cfg.PUBLIC_BASE_URL,
        dogfood: cfg.DASHBOARD_DOGFOOD_KEY
          ? { key: cfg.DASHBOARD_DOGFOOD_KEY, ingestUrl: cfg.DASHBOARD_DOGFOOD_INGEST_URL?.replace(/\/+$/, '') }
          : undefined,
      }),
    ],
    checks: [['database', () => databaseReady(infra)], ['bus', () => infra.bus.healthy()], ...limiterReadiness(infra)],
    stop: async () => {
      await capturer?.close();
    },
  };
}
