import type Router from '@koa/router';
import { databaseReady, limiterReadiness, type Infra } from '../shared/infra.ts';
import type { ReadinessCheck } from '../shared/http/ops-routes.ts';
import { managementPlane } from './plane.ts';
import { scoresRouter } from './routes/scores/scores.routes.ts';
import { issuesRouter } from './routes/issues/issues.routes.ts';
import { elementsRouter } from './routes/elements/elements.routes.ts';
import { heuristicsRouter } from './routes/heuristics/heuristics.routes.ts';
import { alertsRouter } from './routes/alerts/alerts.routes.ts';
import { rawRouter } from './routes/raw/raw.routes.ts';
import { pageRouter } from './routes/pages/page.routes.ts';
import { sessionRouter } from './routes/sessions/session.routes.ts';
import { heatmapsRouter } from './routes/heatmaps/heatmaps.routes.ts';
import { journeysRouter } from './routes/journeys/journeys.routes.ts';
import { exportRouter } from './routes/export/export.routes.ts';
import { revenueRouter } from './routes/revenue/revenue.routes.ts';
import { insightsRouter } from './routes/insights/insights.routes.ts';
import { deploysRouter } from './routes/deploys/deploys.routes.ts';
import { screenshotsRouter } from './routes/screenshots/screenshots.routes.ts';
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
  const readAuth = plane.readAuth;
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
  return {
    routers: [
      scoresRouter({ db: infra.database.db, readAuth }),
      issuesRouter({ db: infra.database.db, readAuth }),
      elementsRouter({ db: infra.database.db, readAuth }),
      alertsRouter({ db: infra.database.db, readAuth }),
      rawRouter({ db: infra.database.db, readAuth }),
      pageRouter({ db: infra.database.db, readAuth }),
      sessionRouter({ db: infra.database.db, readAuth }),
      heatmapsRouter({ db: infra.database.db, readAuth }),
      journeysRouter({ db: infra.database.db, readAuth }),
      exportRouter({ db: infra.database.db, readAuth, log: infra.log }),
      revenueRouter({ db: infra.database.db, readAuth }),
      insightsRouter({ db: infra.database.db, readAuth }),
      deploysRouter({ db: infra.database.db, readAuth }),
      screenshotsRouter({ db: infra.database.db, readAuth, capturer, publicBaseUrl: cfg.PUBLIC_BASE_URL }),
      heuristicsRouter({ readAuth }),
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
