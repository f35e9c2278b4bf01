import { z } from 'zod';
import { READ_SCOPES, ALL_ROLES } from '../http/auth.ts';
import { ScoresResponseSchema, ShortScoresResponseSchema, SiteQuerySchema } from '../routes/scores/scores.schema.ts';
import {
  IssueDetailQuerySchema,
  IssueDetailSchema,
  IssueListQuerySchema,
  IssueListResponseSchema,
} from '../routes/issues/issues.schema.ts';
import { ElementsQuerySchema } from '../routes/elements/elements.routes.ts';
import { ElementListResponseSchema } from '../routes/elements/elements.schema.ts';
import {
  AlertDetailQuerySchema,
  AlertListQuerySchema,
  AlertListResponseSchema,
} from '../routes/alerts/alerts.schema.ts';
import { AlertSchema } from '../routes/alerts/alerts.manage.schema.ts';
import { RawQuerySchema, RawResponseSchema } from '../routes/raw/raw.schema.ts';
import {
  CompareQuerySchema,
  CompareResponseSchema,
  PageQuerySchema,
  PageResponseSchema,
  TrendsQuerySchema,
  TrendsResponseSchema,
} from '../routes/pages/page.schema.ts';
import { SessionQuerySchema, SessionResponseSchema } from '../routes/sessions/session.schema.ts';
import {
  ElementHeatmapQuerySchema,
  ElementHeatmapResponseSchema,
  PageHeatmapQuerySchema,
  PageHeatmapResponseSchema,
} from '../routes/heatmaps/heatmaps.schema.ts';
import {
  FlowsQuerySchema,
  FlowsResponseSchema,
  JourneyQuerySchema,
  JourneysResponseSchema,
} from '../routes/journeys/journeys.schema.ts';
import { ExportQuerySchema } from '../routes/export/export.schema.ts';
import {
  InsightsQuerySchema,
  InsightsResponseSchema,
  RecommendationsQuerySchema,
  RecommendationsResponseSchema,
  RevenueQuerySchema,
  RevenueResponseSchema,
} from '../routes/revenue/revenue.schema.ts';
import {
  DeployDetailQuerySchema,
  DeployListQuerySchema,
  DeployListSchema,
  DeploySchema,
} from '../routes/deploys/deploys.schema.ts';
import { HeuristicsResponseSchema } from '../routes/heuristics/heuristics.routes.ts';
import {
  ScreenshotImageQuerySchema,
  ScreenshotQuerySchema,
  ScreenshotResponseSchema,
} from '../routes/screenshots/screenshots.schema.ts';
import type { RouteDoc } from './route-doc.ts';
import { Uuid } from '../../shared/contracts/uuid.ts';

/**
 * Read routes built as plain routers (their modules validate with these same schemas). A read route added
 * without an entry here, or a RouteTable of its own, fails `ops/e2e/manage-openapi.int.test.ts`.
 */
const read = { kind: 'access', scopes: READ_SCOPES, roles: ALL_ROLES } as const;
const IssueParams = z.object({ issue_id: Uuid() });
const AlertParams = z.object({ alert_id: Uuid() });
const DeployParams = z.object({ deploy_id: Uuid() });

export const readRouteDocs: RouteDoc[] = [
  {
    method: 'get',
    path: '/v1/query/scores',
    tag: 'scores',
    auth: read,
    query: SiteQuerySchema,
    response: ScoresResponseSchema,
    summary: "The site's overall score and trend, and each page's current score",
  },
  {
    method: 'get',
    path: '/v1/scores',
    tag: 'scores',
    auth: read,
    query: SiteQuerySchema,
    response: ShortScoresResponseSchema,
    summary: "Each page's current score with top_signal, issue_count and updated_at (short form)",
  },
  {
    method: 'get',
    path: '/v1/query/issues',
    tag: 'issues',
    auth: read,
    query: IssueListQuerySchema,
    response: IssueListResponseSchema,
    summary: 'UX issues of a site, ranked',
  },
  {
    method: 'get',
    path: '/v1/issues',
    tag: 'issues',
    auth: read,
    query: IssueListQuerySchema,
    response: IssueListResponseSchema,
    summary: 'UX issues of a site (short form)',
  },
  {
    method: 'get',
    path: '/v1/query/issues/:issue_id',
    tag: 'issues',
    auth: read,
    params: IssueParams,
    query: IssueDetailQuerySchema,
    response: IssueDetailSchema,
    summary: 'One issue with its evidence sessions and history',
    description: '404 for an issue of another site, or of another environment than environment (default production).',
  },
  {
    method: 'get',
    path: '/v1/issues/:issue_id',
    tag: 'issues',
    auth: read,
    params: IssueParams,
    query: IssueDetailQuerySchema,
    response: IssueDetailSchema,
    summary: 'One issue (short form)',
  },
  {
    method: 'get',
    path: '/v1/query/elements',
    tag: 'elements',
    auth: read,
    query: ElementsQuerySchema,
    response: ElementListResponseSchema,
    summary: 'Elements with the most friction',
  },
  {
    method: 'get',
    path: '/v1/elements',
    tag: 'elements',
    auth: read,
    query: ElementsQuerySchema,
    response: ElementListResponseSchema,
    summary: 'Elements with the most friction (short form)',
  },
  {
    method: 'get',
    path: '/v1/query/alerts',
    tag: 'alerts',
    auth: read,
    query: AlertListQuerySchema,
    response: AlertListResponseSchema,
    summary: 'Alerts of a site, newest first',
    description:
      'Alert rules evaluate production traffic only, so environment=staging answers an empty list (staging has scores and issues, no alerts).',
  },
  {
    method: 'get',
    path: '/v1/alerts',
    tag: 'alerts',
    auth: read,
    query: AlertListQuerySchema,
    response: AlertListResponseSchema,
    summary: 'Alerts of a site (short form)',
    description:
      'Alert rules evaluate production traffic only, so environment=staging answers an empty list (staging has scores and issues, no alerts).',
  },
  {
    method: 'get',
    path: '/v1/query/alerts/:alert_id',
    tag: 'alerts',
    auth: read,
    params: AlertParams,
    query: AlertDetailQuerySchema,
    response: AlertSchema,
    summary: 'One alert',
  },
  {
    method: 'get',
    path: '/v1/query/raw',
    tag: 'raw',
    auth: read,
    query: RawQuerySchema,
    response: RawResponseSchema,
    summary: "A site's rows of one table, as stored",
    description:
      "Rows of one environment (default production; events and sessions without one are production's); table=alerts has production's only, so environment=staging lists none there.",
  },
  {
    method: 'get',
    path: '/v1/raw',
    tag: 'raw',
    auth: read,
    query: RawQuerySchema,
    response: RawResponseSchema,
    summary: "A site's rows of one table (short form)",
  },
  {
    method: 'get',
    path: '/v1/query/page',
    tag: 'pages',
    auth: read,
    query: PageQuerySchema,
    response: PageResponseSchema,
    summary:
      'One page: score, trend, 30 days of score_history, open issues, elements, budget, recent deploys, active alerts',
    description: '404 when the site never scored the page.',
  },
  {
    method: 'get',
    path: '/v1/page',
    tag: 'pages',
    auth: read,
    query: PageQuerySchema,
    response: PageResponseSchema,
    summary: 'One page (short form; the same shape)',
  },
  {
    method: 'get',
    path: '/v1/query/trends',
    tag: 'pages',
    auth: read,
    query: TrendsQuerySchema,
    response: TrendsResponseSchema,
    summary: 'Daily scores of a page, or of the site when page is omitted, over the last days (1-90, default 7)',
    description:
      "The array is sent twice, as history and as data (the short form's name). Days without traffic are absent.",
  },
  {
    method: 'get',
    path: '/v1/trends',
    tag: 'pages',
    auth: read,
    query: TrendsQuerySchema,
    response: TrendsResponseSchema,
    summary: 'Daily scores (short form; the same shape)',
  },
  {
    method: 'get',
    path: '/v1/query/compare',
    tag: 'pages',
    auth: read,
    query: CompareQuerySchema,
    response: CompareResponseSchema,
    summary:
      'Two pages side by side (score, trend, dominant signal, sessions, signals by type, open issues) and their difference b - a',
  },
  {
    method: 'get',
    path: '/v1/compare',
    tag: 'pages',
    auth: read,
    query: CompareQuerySchema,
    response: CompareResponseSchema,
    summary: 'Two pages side by side (short form; the same shape)',
  },
  {
    method: 'get',
    path: '/v1/query/session',
    tag: 'sessions',
    auth: read,
    query: SessionQuerySchema,
    response: SessionResponseSchema,
    summary: "One session's page views and signals in order (each event has occurred_at and timestamp)",
    description: '404 for an unknown session. At most 5000 events; truncated says when there were more.',
  },
  {
    method: 'get',
    path: '/v1/session',
    tag: 'sessions',
    auth: read,
    query: SessionQuerySchema,
    response: SessionResponseSchema,
    summary: "One session's timeline (short form; the same shape)",
  },
  {
    method: 'get',
    path: '/v1/query/element-heatmap',
    tag: 'heatmaps',
    auth: read,
    query: ElementHeatmapQuerySchema,
    response: ElementHeatmapResponseSchema,
    summary:
      "At most 300 points (rx, ry 0..1, signal) representing the element's latest 800 rage, dead and disabled-element clicks",
    description:
      "Points keep each signal type's share and are spread evenly over time; count is the number of signals they represent.",
  },
  {
    method: 'get',
    path: '/v1/query/page-heatmap',
    tag: 'heatmaps',
    auth: read,
    query: PageHeatmapQuerySchema,
    response: PageHeatmapResponseSchema,
    summary: 'At most 500 page points (vx, vy, px/py when sent, signal, el when known) over the last 30 days',
    description:
      'device=mobile includes tablets; omitted means every device. count is the number of signals the points were drawn from (every k-th in time order).',
  },
  {
    method: 'get',
    path: '/v1/query/page-screenshot',
    tag: 'heatmaps',
    auth: read,
    query: ScreenshotQuerySchema,
    response: ScreenshotResponseSchema,
    summary:
      'A viewport screenshot of the page (site URL + page) on desktop or mobile: { screenshot: { page, device, width, height, captured_at, image_url } }, or { screenshot: null, reason }',
    description:
      'Never waits for a capture: the first request answers null with reason capturing and queues one in the background. reason is disabled (capture off), capturing, not_captured (cached=1 and none stored), limit_reached (SCREENSHOTS_PER_SITE_PER_DAY), refused (the URL or a redirect reaches a forbidden address) or render_failed (error status, timeout, crash). A capture older than a day is answered and refreshed; a failure is retried after an hour.',
  },
  {
    method: 'get',
    path: '/v1/query/page-screenshot/image',
    tag: 'heatmaps',
    auth: read,
    query: ScreenshotImageQuerySchema,
    contentType: 'image/png',
    summary: 'The stored PNG of a page screenshot (the image_url of /query/page-screenshot)',
    description: '404 when no successful capture is stored.',
  },
  {
    method: 'get',
    path: '/v1/query/flows',
    tag: 'journeys',
    auth: read,
    query: FlowsQuerySchema,
    response: FlowsResponseSchema,
    summary:
      'Page-to-page navigation of the 1000 most recently active sessions of the last 7 days: edges (from, to, sessions, transitions; busiest 100) and pages (views, entries, exits; busiest 100)',
  },
  {
    method: 'get',
    path: '/v1/flows',
    tag: 'journeys',
    auth: read,
    query: FlowsQuerySchema,
    response: FlowsResponseSchema,
    summary: 'Navigation flows (short form; the same shape)',
  },
  {
    method: 'get',
    path: '/v1/query/journeys/friction',
    tag: 'journeys',
    auth: read,
    query: JourneyQuerySchema,
    response: JourneysResponseSchema,
    summary:
      'Navigation edges weighted by the edge-decorator signals on their source or destination page; at most 100 edges, 5 examples each',
    description:
      'Sessions analysed: the limit most recently active sessions of the last 30 days with a qualifying signal. friction_weight sums weight x confidence (meta.confidence, 1 when absent) to one decimal; edges below min_friction_weight are removed, then sorted heaviest first.',
  },
  {
    method: 'get',
    path: '/v1/query/export/events.csv',
    tag: 'export',
    auth: read,
    query: ExportQuerySchema,
    contentType: 'text/csv',
    summary: "The site's events as RFC 4180 CSV with a header row, oldest first, streamed",
    description:
      "Columns: id, ts, session_id, type, page, signal, name, selector, label, x, y, vx, vy, px, py (fractions 0..1), value, device, source, app_version, environment, meta (JSON). Text starting with = + - @ (or a tab or CR) is prefixed with '. Content-Disposition names the file.",
  },
  {
    method: 'get',
    path: '/v1/export/events.csv',
    tag: 'export',
    auth: read,
    query: ExportQuerySchema,
    contentType: 'text/csv',
    summary: 'Events as CSV (short form; the same file)',
  },
  {
    method: 'get',
    path: '/v1/query/recommendations',
    tag: 'revenue',
    auth: read,
    query: RecommendationsQuerySchema,
    response: RecommendationsResponseSchema,
    summary:
      "Ranked fixes, one per active issue: the catalog's fix made specific to the element and page, its impact and the issue it closes",
    description: 'Ranked by revenue at risk when revenue tracking is wired, then severity, then affected sessions.',
  },
  {
    method: 'get',
    path: '/v1/recommendations',
    tag: 'revenue',
    auth: read,
    query: RecommendationsQuerySchema,
    response: RecommendationsResponseSchema,
    summary: 'Ranked fixes (short form; the same shape)',
  },
  {
    method: 'get',
    path: '/v1/query/revenue',
    tag: 'revenue',
    auth: read,
    query: RevenueQuerySchema,
    response: RevenueResponseSchema,
    summary:
      'Revenue at risk across active issues over 30 days, with the method; enabled false and the reason when conversion tracking is not wired',
  },
  {
    method: 'get',
    path: '/v1/revenue',
    tag: 'revenue',
    auth: read,
    query: RevenueQuerySchema,
    response: RevenueResponseSchema,
    summary: 'Revenue at risk (short form; the same shape)',
  },
  {
    method: 'get',
    path: '/v1/query/insights',
    tag: 'revenue',
    auth: read,
    query: InsightsQuerySchema,
    response: InsightsResponseSchema,
    summary:
      "Confused versus calm sessions' conversion by page and traffic source over days (1-90, default 7), with ranked insight sentences; empty with the reason without a conversion event",
  },
  {
    method: 'get',
    path: '/v1/query/deploys',
    tag: 'deploys',
    auth: read,
    query: DeployListQuerySchema,
    response: DeployListSchema,
    summary:
      'Deploys of a site and environment, newest first, with before/after scores, related issues, cohort and verdict',
  },
  {
    method: 'get',
    path: '/v1/deploys',
    tag: 'deploys',
    auth: read,
    query: DeployListQuerySchema,
    response: DeployListSchema,
    summary: 'Deploys of a site (short form)',
  },
  {
    method: 'get',
    path: '/v1/query/deploys/:deploy_id',
    tag: 'deploys',
    auth: read,
    params: DeployParams,
    query: DeployDetailQuerySchema,
    response: DeploySchema,
    summary: 'One deploy with its related issues (each with its verification record), cohort and verdict',
  },
  {
    method: 'get',
    path: '/v1/deploys/:deploy_id',
    tag: 'deploys',
    auth: read,
    params: DeployParams,
    query: DeployDetailQuerySchema,
    response: DeploySchema,
    summary: 'One deploy (short form)',
  },
  {
    method: 'get',
    path: '/v1/query/heuristics',
    tag: 'heuristics',
    auth: read,
    query: SiteQuerySchema,
    response: HeuristicsResponseSchema,
    summary: 'The signal catalog',
  },
];
