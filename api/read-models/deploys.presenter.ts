import { deployVerdict, isDecidingLook, type VerificationResult } from '../../shared/domain/deploy-verification.ts';
import type { DeployFields, RelatedData, VerificationFields } from './deploys.queries.ts';

const iso = (d: Date | string) => new Date(d).toISOString();
const round1 = (v: number) => Math.round(v * 10) / 10;

/** A verification record as the issue detail and the deploy's related issues show it (spec fields first). */
export function presentVerification(v: VerificationFields) {
  return {
    deploy_id: v.deploy_id,
    deploy_version: v.deploy_version,
    result: v.result as 'verified' | 'not_verified' | 'insufficient_data' | 'regressed' | 'not_regressed',
    signal_count_before: v.signal_count_before,
    signal_count_after: v.signal_count_after,
    verified_at: iso(v.verified_at),
    sessions_before: v.sessions_before,
    sessions_after: v.sessions_after,
    affected_sessions_before: v.affected_before,
    affected_sessions_after: v.affected_after,
    p_value: v.p_value,
    alpha: v.alpha,
    look: v.look,
    test: v.test as 'fix' | 'regression',
    control: v.control,
  };
}

/**
 * How an issue relates to a deploy, from its latest record there: a fix test makes it verified or still failing; a
 * regression test relates it only when it regressed (a closed issue that stayed closed, or not yet known, is not related).
 */
function relationOf(test: string, result: string): 'verified' | 'regressed' | 'still_failing' | null {
  if (test === 'regression') return result === 'regressed' ? 'regressed' : null;
  return result === 'verified' ? 'verified' : 'still_failing';
}

/** A deploy with its related issues, cohort and verdict (deployVerdict: the same rule the CLI and MCP prompt read). */
export function presentDeploy(d: DeployFields, related: RelatedData) {
  const related_issues = [];
  const tested: { title: string; result: VerificationResult }[] = [];
  const verified: { title: string }[] = [];
  const regressed: { title: string }[] = [];
  for (const r of related.records) {
    if (r.deploy_id !== d.id) continue;
    const relation = relationOf(r.test, r.result);
    if (relation === null) continue;
    if (relation === 'regressed') regressed.push({ title: r.issue.title });
    else if (isDecidingLook(r.look)) tested.push({ title: r.issue.title, result: r.result as VerificationResult });
    if (relation === 'verified') verified.push({ title: r.issue.title });
    related_issues.push({
      issue_id: r.issue.id,
      title: r.issue.title,
      page: r.issue.page,
      signal_type: r.issue.signal_type,
      severity: round1(r.issue.severity),
      status: r.issue.status,
      relation,
      record: presentVerification(r),
    });
  }
  const introduced = related.introduced.filter((i) => i.introduced_by_deploy === d.id);
  for (const i of introduced) {
    related_issues.push({
      issue_id: i.id,
      title: i.title,
      page: i.page,
      signal_type: i.signal_type,
      severity: round1(i.severity),
      status: i.status,
      relation: 'introduced' as const,
      record: null,
    });
  }
  const cohort = d.cohort;
  const { verdict, reasons } = deployVerdict({
    delta: d.delta,
    dataSpanMs: cohort ? Date.parse(cohort.to) - Date.parse(cohort.from) : 0,
    spikeThreshold: related.spikeThreshold,
    regressed,
    introduced: introduced.map((i) => ({ title: i.title, severity: round1(i.severity) })),
    tested,
    verified,
  });
  return {
    id: d.id,
    site_id: d.site_id,
    version: d.version,
    environment: d.environment as 'production' | 'staging',
    commit_sha: d.commit_sha,
    url: d.url,
    description: d.description,
    confusion_before: round1(d.confusion_before),
    confusion_after: d.confusion_after === null ? null : round1(d.confusion_after),
    delta: d.delta === null ? null : round1(d.delta),
    recorded_at: iso(d.recorded_at),
    frozen: d.frozen_at !== null,
    cohort: cohort
      ? { kind: cohort.kind, from: iso(cohort.from), to: iso(cohort.to), sessions: cohort.sessions }
      : null,
    related_issues,
    verdict,
    verdict_reasons: reasons,
    created_by: d.created_by,
  };
}
