import type { ElementRow } from './elements.queries.ts';
import type { z } from 'zod';
import { PageElementSchema, type ElementSchema } from './elements.schema.ts';

/** Shapes one element row for the API (shared with `/query/page`'s `elements[]`). */
export function presentElement(r: ElementRow): z.output<typeof ElementSchema> {
  return {
    page: r.page,
    selector: r.selector,
    label: r.label,
    signals: (typeof r.signals === 'string' ? JSON.parse(r.signals) : r.signals) as Record<string, number>,
    signal_count: r.signal_count,
    friction_score: Math.round(r.friction_score * 10) / 10,
    dominant_signal: r.dominant_signal,
    affected_users: r.affected_users,
    recommendation: r.recommendation,
    last_signal_at: new Date(r.last_signal_at).toISOString(),
  };
}

const PAGE_ELEMENT_FIELDS = Object.keys(PageElementSchema.shape) as (keyof z.output<typeof PageElementSchema>)[];

/** `/query/page`'s `elements[]`: the element with the fields PageElementSchema keeps, in its order. */
export function presentPageElement(r: Parameters<typeof presentElement>[0]): z.output<typeof PageElementSchema> {
  const e = presentElement(r);
  return Object.fromEntries(PAGE_ELEMENT_FIELDS.map((k) => [k, e[k]])) as z.output<typeof PageElementSchema>;
}
