import type { ElementRow, PageElementFields } from './elements.queries.ts';
import type { z } from 'zod';
import type { ElementSchema, PageElementSchema } from './elements.schema.ts';

/** One decimal, as every answer shows the friction score. */
const frictionScore = (v: number) => Math.round(v * 10) / 10;

/** Shapes one element row for the API (`/query/elements`; the page view shows some of its fields: presentPageElement). */
export function presentElement(r: ElementRow): z.output<typeof ElementSchema> {
  return {
    page: r.page,
    selector: r.selector,
    label: r.label,
    signals: (typeof r.signals === 'string' ? JSON.parse(r.signals) : r.signals) as Record<string, number>,
    signal_count: r.signal_count,
    friction_score: frictionScore(r.friction_score),
    dominant_signal: r.dominant_signal,
    affected_users: r.affected_users,
    recommendation: r.recommendation,
    last_signal_at: new Date(r.last_signal_at).toISOString(),
  };
}

/** `/query/page`'s `elements[]`: the fields PageElementSchema keeps, in its order (its `pick`'s), as presentElement shapes them. */
export function presentPageElement(r: PageElementFields): z.output<typeof PageElementSchema> {
  return {
    selector: r.selector,
    label: r.label,
    signals: r.signals,
    friction_score: frictionScore(r.friction_score),
    signal_count: r.signal_count,
    dominant_signal: r.dominant_signal,
  };
}
