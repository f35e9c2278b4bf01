import { round1 } from '../../../shared/domain/score-summary.ts';
import type { Environment } from '../../../shared/domain/deploy-verification.ts';
import { CONTEXT_BUDGET_BYTES, CONTEXT_TEXT_MAX, type SiteContext } from './context.schema.ts';
import type { RelatedIssueRow } from '../../read-models/deploys.queries.ts';

/** `s` cut to `max` characters, ending in `…` when cut (free text must not blow the size budget). */
export function clip(s: string, max = CONTEXT_TEXT_MAX): string {
  return s.length <= max ? s : `${s.slice(0, max - 1)}…`;
}

/** The first `cap` items of a list with the count of all and whether some were left out. */
export function capList<T>(
  items: readonly T[],
  total: number,
  cap: number,
): { items: T[]; total: number; truncated: boolean } {
  const kept = items.slice(0, cap);
  return { items: kept, total, truncated: kept.length < total };
}

type Lists = Pick<SiteContext, 'pages' | 'issues' | 'deploys' | 'alerts' | 'recommendations'>;
const LIST_KEYS = [
  'pages',
  'issues',
  'deploys',
  'alerts',
  'recommendations',
] as const satisfies readonly (keyof Lists)[];

const bytes = (v: unknown) => Buffer.byteLength(JSON.stringify(v));

/**
 * The context cut to `maxBytes` of JSON: while it is larger, the last item of the longest list goes (that list is then
 * `truncated`), so every list keeps its worst items and none is emptied while another holds more. The caps and the
 * text clip keep the demo data well inside; this is the guarantee for long page paths and titles.
 */
export function fitToBudget(ctx: SiteContext, maxBytes = CONTEXT_BUDGET_BYTES): SiteContext {
  const out: SiteContext = { ...ctx };
  for (const k of LIST_KEYS) out[k] = { ...ctx[k], items: [...ctx[k].items] } as never;
  let size = bytes(out);
  while (size > maxBytes) {
    const longest = LIST_KEYS.reduce((a, b) => (out[b].items.length > out[a].items.length ? b : a));
    const list = out[longest];
    if (list.items.length === 0) break;
    const dropped = list.items.pop();
    list.truncated = true;
    size -= bytes(dropped) + 1;
  }
  return out;
}

export interface ContextParts {
  siteId: string;
  environment: Environment;
  at: Date;
  overall: { score: number; trend: 'up' | 'down' | 'stable' };
  pages: { page: string; score: number; trend: 'up' | 'down' | 'stable'; dominant_signal: string | null }[];
  issues: {
    rows: (RelatedIssueRow & { affected_sessions: number })[];
    total: number;
  };
  deploys: {
    rows: {
      id: string;
      version: string;
      recorded_at: string;
      confusion_before: number;
      confusion_after: number | null;
      delta: number | null;
      verdict: 'PASS' | 'WARN' | 'FAIL';
      verdict_reasons: string[];
    }[];
    total: number;
  };
  alerts: {
    rows: {
      id: string;
      rule_name: string;
      page: string | null;
      trigger_type: string;
      score_before: number | null;
      score_after: number | null;
      status: string;
      triggered_at: Date;
      channels: string[] | null;
    }[];
    total: number;
  };
  recommendations: {
    rows: {
      rank: number;
      recommendation: string;
      page: string;
      closes: { issue_id: string };
      impact: { severity: number; affected_sessions: number };
    }[];
    total: number;
  };
}

/** The site context: each list capped at `caps` with its total, free text clipped, the whole fitted to the size budget. */
export function presentContext(
  p: ContextParts,
  caps: Record<keyof Lists, number>,
  maxBytes = CONTEXT_BUDGET_BYTES,
): SiteContext {
  return fitToBudget(
    {
      site_id: p.siteId,
      environment: p.environment,
      generated_at: p.at.toISOString(),
      overall_score: p.overall.score,
      overall_trend: p.overall.trend,
      pages: capList(
        p.pages.map((x) => ({
          page: clip(x.page),
          score: x.score,
          trend: x.trend,
          dominant_signal: x.dominant_signal,
        })),
        p.pages.length,
        caps.pages,
      ),
      issues: capList(
        p.issues.rows.map((i) => ({
          id: i.id,
          title: clip(i.title),
          page: clip(i.page),
          signal_type: i.signal_type,
          severity: round1(i.severity),
          status: i.status,
          affected_sessions: i.affected_sessions,
        })),
        p.issues.total,
        caps.issues,
      ),
      deploys: capList(
        p.deploys.rows.map((d) => ({
          id: d.id,
          version: clip(d.version),
          recorded_at: d.recorded_at,
          confusion_before: d.confusion_before,
          confusion_after: d.confusion_after,
          delta: d.delta,
          verdict: d.verdict,
          verdict_reasons: d.verdict_reasons.slice(0, 3).map((r) => clip(r)),
        })),
        p.deploys.total,
        caps.deploys,
      ),
      alerts: capList(
        p.alerts.rows.map((a) => ({
          id: a.id,
          rule_name: clip(a.rule_name),
          page: a.page === null ? null : clip(a.page),
          trigger_type: a.trigger_type,
          score_before: a.score_before === null ? null : round1(a.score_before),
          score_after: a.score_after === null ? null : round1(a.score_after),
          status: a.status,
          triggered_at: a.triggered_at.toISOString(),
          mcp_channel: a.channels?.includes('mcp') ?? false,
        })),
        p.alerts.total,
        caps.alerts,
      ),
      recommendations: capList(
        p.recommendations.rows.map((r) => ({
          rank: r.rank,
          recommendation: clip(r.recommendation),
          page: clip(r.page),
          issue_id: r.closes.issue_id,
          severity: r.impact.severity,
          affected_sessions: r.impact.affected_sessions,
        })),
        p.recommendations.total,
        caps.recommendations,
      ),
    },
    maxBytes,
  );
}
