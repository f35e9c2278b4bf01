import { z } from 'zod';
import { Uuid } from '../../../shared/contracts/uuid.ts';
import { ISSUE_STATUSES } from '../../../shared/domain/issue-status.ts';
import { NotFoundError } from '../../../shared/errors.ts';
import { issueDetail } from '../../routes/issues/issues.routes.ts';
import { listIssues } from '../../read-models/issues.queries.ts';
import { presentIssue } from '../../read-models/issues.presenter.ts';
import { defineTool, envOf, environmentArg, limitArg, listMeta, siteArg, Count } from './tool.ts';

const IssueBrief = z.object({
  id: z.string(),
  title: z.string(),
  page: z.string(),
  selector: z.string().nullable(),
  signal_type: z.string(),
  severity: z.number(),
  status: z.string(),
  signal_count: Count,
  affected_sessions: Count,
});
const brief = (i: ReturnType<typeof presentIssue>): z.output<typeof IssueBrief> => ({
  id: i.id,
  title: i.title,
  page: i.page,
  selector: i.selector,
  signal_type: i.signal_type,
  severity: i.severity,
  status: i.status,
  signal_count: i.signal_count,
  affected_sessions: i.affected_sessions,
});

export const listIssuesTool = defineTool({
  name: 'list_issues',
  title: 'List issues',
  description: 'UX issues of a site, most severe first, optionally of one status.',
  input: {
    site_id: siteArg,
    environment: environmentArg,
    status: z.enum(ISSUE_STATUSES).optional(),
    limit: limitArg(100, 20),
  },
  output: z.object({ issues: z.array(IssueBrief), ...listMeta }),
  async run(c, a, siteId) {
    const { rows, total } = await listIssues(c.db, {
      site_id: siteId,
      environment: envOf(a.environment),
      status: a.status,
      limit: a.limit ?? 20,
      offset: 0,
    });
    const issues = rows.map((r) => brief(presentIssue(r)));
    const top = issues[0];
    return {
      data: { issues, total, truncated: issues.length < total },
      summary:
        `${issues.length} of ${total} issue(s)` +
        (top ? `; most severe: "${top.title}" on ${top.page} (severity ${top.severity}, ${top.status})` : ''),
    };
  },
});

/** Evidence sessions an answer carries (the REST detail holds up to its own bound). */
const EVIDENCE_CAP = 10;

export const getIssueTool = defineTool({
  name: 'get_issue',
  title: 'Get an issue',
  description: 'One issue with its hypothesis, evidence sessions and verification history across deploys.',
  input: { issue_id: z.string().max(64).describe('issue id (uuid)'), site_id: siteArg, environment: environmentArg },
  output: z.object({
    issue: IssueBrief.extend({
      hypothesis: z.string().nullable(),
      first_signal_at: z.string().nullable(),
      resolved_at: z.string().nullable(),
      evidence_sessions: z.array(z.object({ id: z.string(), signals: Count, timestamp: z.string().nullable() })),
      evidence_total: Count,
      verifications: z.array(
        z.object({
          deploy_id: z.string(),
          deploy_version: z.string(),
          test: z.string(),
          result: z.string(),
          look: z.string(),
          verified_at: z.string(),
          affected_sessions_before: Count,
          sessions_before: Count,
          affected_sessions_after: Count,
          sessions_after: Count,
          p_value: z.number().nullable(),
        }),
      ),
    }),
  }),
  async run(c, a, siteId) {
    // A malformed id is answered like a missing one (as the REST route does): ids are not worth a different error.
    const id = Uuid().safeParse(a.issue_id);
    const d = id.success ? await issueDetail(c.db, siteId, envOf(a.environment), id.data) : undefined;
    if (!d) throw new NotFoundError('issue not found');
    const verifications = d.verifications
      .map(
        (v) =>
          v as Record<string, unknown> as {
            deploy_id: string;
            deploy_version: string;
            test: string;
            result: string;
            look: string;
            verified_at: string;
            affected_sessions_before: number;
            sessions_before: number;
            affected_sessions_after: number;
            sessions_after: number;
            p_value: number | null;
          },
      )
      .map((v) => ({
        deploy_id: v.deploy_id,
        deploy_version: v.deploy_version,
        test: v.test,
        result: v.result,
        look: v.look,
        verified_at: v.verified_at,
        affected_sessions_before: v.affected_sessions_before,
        sessions_before: v.sessions_before,
        affected_sessions_after: v.affected_sessions_after,
        sessions_after: v.sessions_after,
        p_value: v.p_value,
      }));
    const last = verifications.at(-1);
    return {
      data: {
        issue: {
          ...brief(d),
          hypothesis: d.hypothesis,
          first_signal_at: d.first_signal_at,
          resolved_at: d.resolved_at,
          evidence_sessions: d.sessions.slice(0, EVIDENCE_CAP),
          evidence_total: d.sessions.length,
          verifications,
        },
      },
      summary:
        `"${d.title}" on ${d.page}: ${d.status}, severity ${d.severity}, ${d.affected_sessions} affected session(s)` +
        (last ? `; last check after deploy ${last.deploy_version}: ${last.result}` : '; no deploy has tested it yet'),
    };
  },
});
