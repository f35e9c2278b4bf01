import { z } from 'zod';
import { NotFoundError } from '../../../shared/errors.ts';
import { sampledPageSignals, PAGE_HEATMAP_DAYS } from '../../routes/heatmaps/heatmaps.queries.ts';
import { pageView } from '../../routes/pages/page.routes.ts';
import { defineTool, envOf, environmentArg, siteArg, Count } from './tool.ts';

/** Elements, issues and hotspots a page answer carries; the daily scores of the last TREND_DAYS. */
const TOP = 5;
const TREND_DAYS = 7;

export interface HeatmapSummary {
  days: number;
  signals: number;
  by_signal: Record<string, number>;
  hotspots: { selector: string; share: number }[];
}

/**
 * A page heatmap in a few numbers an assistant can read: how many located signals the last PAGE_HEATMAP_DAYS hold, their
 * types and the elements they fall on most, as shares of the sample the heatmap route draws (its points, at most 500).
 */
export function summarizeHeatmap(
  rows: readonly { signal_type: string; selector: string | null }[],
  total: number,
): HeatmapSummary {
  const bySignal = new Map<string, number>();
  const bySelector = new Map<string, number>();
  for (const r of rows) {
    bySignal.set(r.signal_type, (bySignal.get(r.signal_type) ?? 0) + 1);
    if (r.selector) bySelector.set(r.selector, (bySelector.get(r.selector) ?? 0) + 1);
  }
  const scale = rows.length === 0 ? 0 : total / rows.length;
  return {
    days: PAGE_HEATMAP_DAYS,
    signals: total,
    by_signal: Object.fromEntries(
      [...bySignal].sort((a, b) => b[1] - a[1]).map(([k, n]) => [k, Math.round(n * scale)]),
    ),
    hotspots: [...bySelector]
      .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
      .slice(0, TOP)
      .map(([selector, n]) => ({ selector, share: Math.round((n / rows.length) * 100) / 100 })),
  };
}

export const getPageTool = defineTool({
  name: 'get_page',
  title: 'Get a page',
  description:
    'One page: confusion score and trend, recent daily scores, top elements, active issues, heatmap summary.',
  input: {
    page: z.string().min(1).max(2048).describe('page path, e.g. /checkout'),
    site_id: siteArg,
    environment: environmentArg,
  },
  output: z.object({
    page: z.string(),
    score: z.number(),
    trend: z.string(),
    dominant_signal: z.string().nullable(),
    score_history: z.array(z.object({ date: z.string(), score: z.number() })),
    top_elements: z.array(
      z.object({
        selector: z.string(),
        label: z.string().nullable(),
        signal_count: Count,
        dominant_signal: z.string().nullable(),
        friction_score: z.number(),
      }),
    ),
    issues: z.array(
      z.object({
        id: z.string(),
        title: z.string(),
        signal_type: z.string(),
        severity: z.number(),
        status: z.string(),
      }),
    ),
    issues_total: Count,
    heatmap: z.object({
      days: Count,
      signals: Count,
      by_signal: z.record(z.string(), z.number()),
      hotspots: z.array(z.object({ selector: z.string(), share: z.number() })),
    }),
  }),
  async run(c, a, siteId) {
    const env = envOf(a.environment);
    const at = c.now();
    const [view, heat] = await Promise.all([
      pageView(c.db, siteId, env, a.page, at),
      sampledPageSignals(c.db, { site_id: siteId, environment: env, page: a.page }, undefined, at),
    ]);
    if (!view) throw new NotFoundError(`page not found: ${a.page} has no score on this site (${env})`);
    const heatmap = summarizeHeatmap(heat.rows, heat.total);
    return {
      data: {
        page: view.page,
        score: view.score,
        trend: view.trend,
        dominant_signal: view.dominant_signal,
        score_history: view.score_history.slice(-TREND_DAYS),
        top_elements: view.elements.slice(0, TOP).map((e) => ({
          selector: e.selector,
          label: e.label,
          signal_count: e.signal_count,
          dominant_signal: e.dominant_signal,
          friction_score: e.friction_score,
        })),
        issues: view.issues.slice(0, TOP).map((i) => ({
          id: i.id,
          title: i.title,
          signal_type: i.signal_type,
          severity: i.severity,
          status: i.status,
        })),
        issues_total: view.issues.length,
        heatmap,
      },
      summary:
        `${view.page}: score ${view.score} (${view.trend}), ${view.issues.length} active issue(s)` +
        (view.elements[0] ? `; worst element ${view.elements[0].selector}` : '') +
        `; ${heatmap.signals} located signal(s) in ${heatmap.days} days`,
    };
  },
});
