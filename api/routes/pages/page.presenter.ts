import type { z } from 'zod';
import { JsonText } from '../../../shared/http/envelope.ts';
import { round1 } from '../../../shared/domain/score-summary.ts';
import { presentAlert, type AlertRow } from '../../read-models/alerts.presenter.ts';
import { presentPageElement } from '../../read-models/elements.presenter.ts';
import type { PageElementFields } from '../../read-models/elements.queries.ts';
import { presentIssue } from '../../read-models/issues.presenter.ts';
import type { IssueFields } from '../../read-models/issues.queries.ts';
import type { PageBudget } from './budget.ts';
import type { presentDeploy } from '../../read-models/deploys.presenter.ts';
import type { PageScoreNow } from './page.queries.ts';
import type { CompareResponseSchema, PageResponseSchema, TrendsResponseSchema } from './page.schema.ts';

/** A page's current score fields; a page with daily scores but no current window scores 0, stable. */
function scoreFields(score: PageScoreNow | undefined) {
  // The processor writes only up, down and stable.
  return {
    score: round1(score?.score ?? 0),
    trend: (score?.trend ?? 'stable') as 'up' | 'down' | 'stable',
    dominant_signal: score?.dominant_signal ?? null,
  };
}

/** `/query/page` and `/v1/page`: one shape for both forms. */
export function presentPage(p: {
  page: string;
  score: PageScoreNow | undefined;
  history: { date: string; score: number }[];
  issues: IssueFields[];
  elements: PageElementFields[];
  budget: PageBudget;
  deploys: ReturnType<typeof presentDeploy>[];
  alerts: AlertRow[];
}): z.output<typeof PageResponseSchema> {
  return {
    page: p.page,
    ...scoreFields(p.score),
    updated_at: p.score?.updated_at.toISOString() ?? null,
    score_history: p.history.map((h) => ({ date: h.date, score: round1(h.score) })),
    issues: p.issues.map(presentIssue),
    elements: p.elements.map(presentPageElement),
    budget: p.budget,
    deploys: p.deploys,
    alerts: p.alerts.map(presentAlert),
  };
}

/**
 * `/query/page` as JSON text: presentPage's answer with its issues and elements as the text the database wrote of their
 * presented forms (issuesOfPageText, pageElementsText), the other fields serialized here: the same text
 * JSON.stringify makes of presentPage's answer (page-view-text.int.test.ts), without the 100 issues parsed and
 * serialized again.
 */
export function pageAnswer(
  p: Omit<Parameters<typeof presentPage>[0], 'issues' | 'elements'> & { issues: string; elements: string },
): JsonText {
  const v = presentPage({ ...p, issues: [], elements: [] });
  const s = JSON.stringify;
  return new JsonText(
    `{"page":${s(v.page)},"score":${s(v.score)},"trend":${s(v.trend)},"dominant_signal":${s(v.dominant_signal)},` +
      `"updated_at":${s(v.updated_at)},"score_history":${s(v.score_history)},"issues":${p.issues},` +
      `"elements":${p.elements},"budget":${s(v.budget)},"deploys":${s(v.deploys)},"alerts":${s(v.alerts)}}`,
  );
}

/** `/query/trends` and `/v1/trends`: the spec names the array `history` in one form and `data` in the other; both carry both. */
export function presentTrends(
  page: string | null,
  days: number,
  history: { date: string; score: number }[],
): z.output<typeof TrendsResponseSchema> {
  const points = history.map((h) => ({ date: h.date, score: round1(h.score) }));
  return { page, days, history: points, data: points };
}

export interface ComparedPage {
  page: string;
  score: PageScoreNow | undefined;
  sessions: number;
  signals: Record<string, number>;
  open_issues: number;
}

function side(c: ComparedPage) {
  return {
    page: c.page,
    ...scoreFields(c.score),
    sessions: c.sessions,
    signals: c.signals,
    open_issues: c.open_issues,
  };
}

/** `/query/compare`: both pages side by side and `difference` = b minus a for every number (signals per type). */
export function presentComparison(a: ComparedPage, b: ComparedPage): z.output<typeof CompareResponseSchema> {
  const sa = side(a);
  const sb = side(b);
  const types = [...new Set([...Object.keys(a.signals), ...Object.keys(b.signals)])].sort();
  return {
    a: sa,
    b: sb,
    difference: {
      score: round1(sb.score - sa.score),
      sessions: sb.sessions - sa.sessions,
      open_issues: sb.open_issues - sa.open_issues,
      signals: Object.fromEntries(types.map((t) => [t, (b.signals[t] ?? 0) - (a.signals[t] ?? 0)])),
    },
    higher_friction: sa.score === sb.score ? null : sa.score > sb.score ? 'a' : 'b',
  };
}
