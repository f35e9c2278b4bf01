import { z } from 'zod';
import { READ_SCOPES, ALL_ROLES } from '../http/auth.ts';
import { ScoresResponseSchema, ShortScoresResponseSchema, SiteQuerySchema } from '../routes/scores/scores.schema.ts';
import { IssueDetailQuerySchema, IssueDetailSchema, IssueListQuerySchema, IssueListResponseSchema } from '../routes/issues/issues.schema.ts';
import { ElementsQuerySchema } from '../routes/elements/elements.routes.ts';
import { AlertDetailQuerySchema, AlertListQuerySchema } from '../routes/alerts/alerts.schema.ts';
import { RawQuerySchema } from '../routes/raw/raw.schema.ts';
import type { RouteDoc } from './route-doc.ts';
import { Uuid } from '../../shared/contracts/uuid.ts';

/**
 * Read routes built as plain routers (their modules validate with these same schemas). A read route added
 * without an entry here, or a RouteTable of its own, fails `ops/e2e/manage-openapi.int.test.ts`.
 */
const read = { kind: 'access', scopes: READ_SCOPES, roles: ALL_ROLES } as const;
const IssueParams = z.object({ issue_id: Uuid() });
const AlertParams = z.object({ alert_id: Uuid() });

export const readRouteDocs: RouteDoc[] = [
  { method: 'get', path: '/v1/query/scores', tag: 'scores', auth: read, query: SiteQuerySchema, response: ScoresResponseSchema, summary: 'The site\'s overall score and trend, and each page\'s current score' },
  { method: 'get', path: '/v1/scores', tag: 'scores', auth: read, query: SiteQuerySchema, response: ShortScoresResponseSchema, summary: 'Each page\'s current score with top_signal, issue_count and updated_at (short form)' },
  { method: 'get', path: '/v1/query/issues', tag: 'issues', auth: read, query: IssueListQuerySchema, response: IssueListResponseSchema, summary: 'UX issues of a site, ranked' },
  { method: 'get', path: '/v1/issues', tag: 'issues', auth: read, query: IssueListQuerySchema, response: IssueListResponseSchema, summary: 'UX issues of a site (short form)' },
  { method: 'get', path: '/v1/query/issues/:issue_id', tag: 'issues', auth: read, params: IssueParams, query: IssueDetailQuerySchema, response: IssueDetailSchema, summary: 'One issue with its evidence sessions and history' },
  { method: 'get', path: '/v1/issues/:issue_id', tag: 'issues', auth: read, params: IssueParams, query: IssueDetailQuerySchema, response: IssueDetailSchema, summary: 'One issue (short form)' },
  { method: 'get', path: '/v1/query/elements', tag: 'elements', auth: read, query: ElementsQuerySchema, summary: 'Elements with the most friction' },
  { method: 'get', path: '/v1/elements', tag: 'elements', auth: read, query: ElementsQuerySchema, summary: 'Elements with the most friction (short form)' },
  { method: 'get', path: '/v1/query/alerts', tag: 'alerts', auth: read, query: AlertListQuerySchema, summary: 'Alerts of a site, newest first' },
  { method: 'get', path: '/v1/alerts', tag: 'alerts', auth: read, query: AlertListQuerySchema, summary: 'Alerts of a site (short form)' },
  { method: 'get', path: '/v1/query/alerts/:alert_id', tag: 'alerts', auth: read, params: AlertParams, query: AlertDetailQuerySchema, summary: 'One alert' },
  { method: 'get', path: '/v1/query/raw', tag: 'raw', auth: read, query: RawQuerySchema, summary: 'A site\'s rows of one table, as stored' },
  { method: 'get', path: '/v1/raw', tag: 'raw', auth: read, query: RawQuerySchema, summary: 'A site\'s rows of one table (short form)' },
  { method: 'get', path: '/v1/query/heuristics', tag: 'heuristics', auth: read, query: SiteQuerySchema, summary: 'The signal catalog' },
];
