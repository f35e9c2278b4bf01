import type { ReadDeps } from '../../http/deps.ts';
import type { RouteTable } from '../../http/routes.ts';
import { pageHeatmapAnswer, presentElementHeatmap } from './heatmaps.presenter.ts';
import { ELEMENT_HEATMAP_MAX_POINTS, pageHeatmapPoints, recentElementSignals } from './heatmaps.queries.ts';
import {
  ElementHeatmapQuerySchema,
  ElementHeatmapResponseSchema,
  PageHeatmapQuerySchema,
  PageHeatmapResponseSchema,
} from './heatmaps.schema.ts';
import { representativeSample } from './sample.ts';

/** `/v1/query/element-heatmap` and `/v1/query/page-heatmap`. A page or element without signals has no points (200). */
export function heatmapRoutes(table: RouteTable, deps: ReadDeps): RouteTable {
  table.read({
    path: '/v1/query/element-heatmap',
    tag: 'heatmaps',
    summary:
      "At most 300 points (rx, ry 0..1, signal) representing the element's latest 800 rage, dead and disabled-element clicks",
    description:
      "Points keep each signal type's share and are spread evenly over time; count is the number of signals they represent.",
    query: ElementHeatmapQuerySchema,
    response: ElementHeatmapResponseSchema,
    async handler(_ctx, { query: q }) {
      const recent = await recentElementSignals(deps.db, q, q.selector);
      const points = representativeSample(recent, ELEMENT_HEATMAP_MAX_POINTS, (s) => s.signal_type);
      return presentElementHeatmap(q.page, q.selector, recent.length, points);
    },
  });
  return table.read({
    path: '/v1/query/page-heatmap',
    tag: 'heatmaps',
    summary: 'At most 500 page points (vx, vy, px/py when sent, signal, el when known) over the last 30 days',
    description:
      'device=mobile includes tablets; omitted means every device. count is the number of signals the points were drawn from (every k-th in time order).',
    query: PageHeatmapQuerySchema,
    response: PageHeatmapResponseSchema,
    async handler(_ctx, { query: q }) {
      const { points, total } = await pageHeatmapPoints(deps.db, q, q.device, deps.now());
      return pageHeatmapAnswer(q.page, q.device ?? null, total, points);
    },
  });
}
