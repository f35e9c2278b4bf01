import Router from '@koa/router';
import type Koa from 'koa';
import type { Kysely } from 'kysely';
import type { Database } from '../../../shared/db/database.ts';
import { NotFoundError } from '../../../shared/errors.ts';
import { ok } from '../../../shared/http/envelope.ts';
import { siteQuery } from '../../http/auth.ts';
import type { z } from 'zod';
import { IssueDetailQuerySchema, IssueListQuerySchema, type IssueDetailSchema } from './issues.schema.ts';
import { findIssue, listIssues } from './issues.queries.ts';
import { presentIssue, presentSessionId } from './issues.presenter.ts';
import { Uuid } from '../../../shared/contracts/uuid.ts';
import type { Environment } from '../../../shared/domain/deploy-verification.ts';
import { issueVerifications } from '../deploys/deploys.queries.ts';
import { presentVerification } from '../deploys/deploys.presenter.ts';

export interface IssuesDeps {
  db: Kysely<Database>;
  readAuth: Koa.Middleware;
}

const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());

/** One issue of the site and environment with its evidence sessions, verification history and changes; undefined when missing. */
export async function issueDetail(
  db: Kysely<Database>,
  siteId: string,
  environment: Environment,
  id: string,
): Promise<z.output<typeof IssueDetailSchema> | undefined> {
  const found = await findIssue(db, siteId, environment, id);
  if (!found) return undefined;
  const { issue, sessions, updates } = found;
  return {
    ...presentIssue(issue),
    hypothesis: issue.hypothesis,
    first_signal_at: iso(issue.first_signal_at),
    resolved_at: iso(issue.resolved_at),
    sessions: sessions.map((s) => ({
      id: presentSessionId(s.session_id),
      signals: s.signals,
      timestamp: iso(s.last_signal_at),
    })),
    introduced_by_deploy: issue.introduced_by_deploy,
    verifications: (await issueVerifications(db, issue.id)).map(presentVerification),
    history: updates.map((u) => ({
      source: u.source,
      kind: u.kind,
      changes: u.changes,
      reason: u.reason,
      at: iso(u.created_at),
    })),
  };
}

/** `/v1/query/issues`, `/v1/query/issues/:issue_id` and their short forms `/v1/issues`, `/v1/issues/:id`. */
export function issuesRouter(deps: IssuesDeps): Router {
  const router = new Router();

  const list: Koa.Middleware = async (ctx) => {
    const q = siteQuery(ctx, IssueListQuerySchema);
    const { rows, total } = await listIssues(deps.db, q);
    ctx.body = ok({ issues: rows.map(presentIssue), total, limit: q.limit, offset: q.offset });
  };

  const detail: Koa.Middleware = async (ctx) => {
    const { site_id, environment } = siteQuery(ctx, IssueDetailQuerySchema);
    // A malformed id is answered like a missing one: ids are not worth a different error.
    const id = Uuid().safeParse(ctx.params.issue_id);
    const body = id.success ? await issueDetail(deps.db, site_id, environment, id.data) : undefined;
    if (!body) throw new NotFoundError('issue not found');
    ctx.body = ok(body);
  };

  router.get('/v1/query/issues', deps.readAuth, list);
  router.get('/v1/issues', deps.readAuth, list);
  router.get('/v1/query/issues/:issue_id', deps.readAuth, detail);
  router.get('/v1/issues/:issue_id', deps.readAuth, detail);
  return router;
}
