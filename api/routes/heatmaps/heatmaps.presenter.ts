import type { z } from 'zod';
import { JsonText } from '../../../shared/http/envelope.ts';
import type { PageHeatmapRow } from './heatmaps.queries.ts';
import type { ElementHeatmapResponseSchema, PageHeatmapResponseSchema } from './heatmaps.schema.ts';
/** Stored coordinates are integers 0..1000 (ingest converts the older offset-plus-size form); served as 0..1. */
const unit = (v: number): number => v / 1000;

/** `/query/element-heatmap`: `count` is the number of signals the points represent (at most 800). */
export function presentElementHeatmap(
  page: string,
  selector: string,
  count: number,
  points: { signal_type: string; x: number; y: number }[],
): z.output<typeof ElementHeatmapResponseSchema> {
  return {
    page,
    selector,
    count,
    points: points.map((p) => ({ rx: unit(p.x), ry: unit(p.y), signal: p.signal_type })),
  };
}

/** `/query/page-heatmap`: `px`/`py` only when the SDK sent them, `el` only when the element was identified. */
export function presentPageHeatmap(
  page: string,
  device: string | null,
  count: number,
  points: PageHeatmapRow[],
): z.output<typeof PageHeatmapResponseSchema> {
  return {
    page,
    device,
    count,
    points: points.map((p) => ({
      vx: unit(p.vx),
      vy: unit(p.vy),
      ...(p.px !== null && p.py !== null ? { px: unit(p.px), py: unit(p.py) } : {}),
      signal: p.signal_type,
      ...(p.selector ? { el: p.selector } : {}),
    })),
  };
}

/**
 * `/query/page-heatmap` as JSON text around the points the database wrote (pageHeatmapPoints: presentPageHeatmap's
 * points, byte for byte): the same text JSON.stringify makes of presentPageHeatmap's answer.
 */
export function pageHeatmapAnswer(page: string, device: string | null, count: number, points: string): JsonText {
  return new JsonText(
    `{"page":${JSON.stringify(page)},"device":${JSON.stringify(device)},"count":${JSON.stringify(count)},"points":${points}}`,
  );
}
