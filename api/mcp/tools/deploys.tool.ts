import { z } from 'zod';
import { Uuid } from '../../../shared/contracts/uuid.ts';
import { NotFoundError } from '../../../shared/errors.ts';
import { findDeploy, findDeployByVersion, listDeploys } from '../../read-models/deploys.queries.ts';
import { presentDeploy } from '../../read-models/deploys.presenter.ts';
import { defineTool, envOf, environmentArg, limitArg, listMeta, siteArg, Count } from './tool.ts';

const Verdict = z.enum(['PASS', 'WARN', 'FAIL']);
const DeployBrief = z.object({
  id: z.string(),
  version: z.string(),
  environment: z.string(),
  recorded_at: z.string(),
  confusion_before: z.number(),
  confusion_after: z.number().nullable(),
  delta: z.number().nullable(),
  verdict: Verdict,
});
type Deploy = ReturnType<typeof presentDeploy>;
const brief = (d: Deploy): z.output<typeof DeployBrief> => ({
  id: d.id,
  version: d.version,
  environment: d.environment,
  recorded_at: d.recorded_at,
  confusion_before: d.confusion_before,
  confusion_after: d.confusion_after,
  delta: d.delta,
  verdict: d.verdict,
});

export const listDeploysTool = defineTool({
  name: 'list_deploys',
  title: 'List deploys',
  description: 'Recent deploys of a site, newest first, with confusion before, after, delta and verdict.',
  input: { site_id: siteArg, environment: environmentArg, limit: limitArg(100, 10) },
  output: z.object({ deploys: z.array(DeployBrief), ...listMeta }),
  async run(c, a, siteId) {
    const { rows, total, related } = await listDeploys(c.db, {
      site_id: siteId,
      environment: envOf(a.environment),
      limit: a.limit ?? 10,
      offset: 0,
    });
    const deploys = rows.map((r) => brief(presentDeploy(r, related)));
    return {
      data: { deploys, total, truncated: deploys.length < total },
      summary:
        `${deploys.length} of ${total} deploy(s)` +
        (deploys[0] ? `; latest ${deploys[0].version}: ${deploys[0].verdict}` : ''),
    };
  },
});

/** The deploy named by id, or the latest of that version in the environment; undefined when neither exists on the site. */
export async function findCheckedDeploy(
  c: { db: Parameters<typeof findDeploy>[0] },
  siteId: string,
  environment: 'production' | 'staging',
  deploy: string,
): Promise<Deploy | undefined> {
  const id = Uuid().safeParse(deploy);
  const found =
    (id.success ? await findDeploy(c.db, siteId, id.data) : undefined) ??
    (await findDeployByVersion(c.db, siteId, environment, deploy));
  return found ? presentDeploy(found.row, found.related) : undefined;
}

export const CheckSchema = z.object({
  deploy: DeployBrief.extend({
    cohort: z.object({ kind: z.string(), from: z.string(), to: z.string(), sessions: Count }).nullable(),
  }),
  verdict: Verdict,
  verdict_reasons: z.array(z.string()),
  related_issues: z.array(
    z.object({
      issue_id: z.string(),
      title: z.string(),
      page: z.string(),
      relation: z.string(),
      severity: z.number(),
      affected_sessions_before: Count.nullable(),
      sessions_before: Count.nullable(),
      affected_sessions_after: Count.nullable(),
      sessions_after: Count.nullable(),
      p_value: z.number().nullable(),
    }),
  ),
});

/** The check's answer: the deploy record's verdict (deployVerdict via presentDeploy) and the numbers it rests on. */
export function presentCheck(d: Deploy): z.output<typeof CheckSchema> {
  return {
    deploy: { ...brief(d), cohort: d.cohort },
    verdict: d.verdict,
    verdict_reasons: d.verdict_reasons,
    related_issues: d.related_issues.map((r) => ({
      issue_id: r.issue_id,
      title: r.title,
      page: r.page,
      relation: r.relation,
      severity: r.severity,
      affected_sessions_before: r.record?.affected_sessions_before ?? null,
      sessions_before: r.record?.sessions_before ?? null,
      affected_sessions_after: r.record?.affected_sessions_after ?? null,
      sessions_after: r.record?.sessions_after ?? null,
      p_value: r.record?.p_value ?? null,
    })),
  };
}

export const checkDeployTool = defineTool({
  name: 'check_deploy',
  title: 'Check a deploy',
  description: 'Verdict PASS, WARN or FAIL of one deploy (id or version) with the numbers and issues behind it.',
  input: {
    deploy: z.string().min(1).max(128).describe('deploy id or version'),
    site_id: siteArg,
    environment: environmentArg,
  },
  output: CheckSchema,
  async run(c, a, siteId) {
    const d = await findCheckedDeploy(c, siteId, envOf(a.environment), a.deploy);
    if (!d)
      throw new NotFoundError(
        `deploy not found: no deploy with id or ${envOf(a.environment)} version "${a.deploy}" on this site`,
      );
    return {
      data: presentCheck(d),
      summary: `${d.verdict}: deploy ${d.version} (${d.environment}), confusion ${d.confusion_before} → ${d.confusion_after ?? 'n/a'} (delta ${d.delta ?? 'n/a'}); ${d.verdict_reasons.join('; ')}`,
    };
  },
});
