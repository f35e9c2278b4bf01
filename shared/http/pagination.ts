import { z } from 'zod';

/**
 * The one pagination helper: `limit` bounded per route (spec bounds), `offset` from 0. Lists answer with
 * their `total` so a client knows when to stop.
 */
export function pageParams(bounds: { max: number; default: number }) {
  return {
    limit: z.coerce.number().int().min(1).max(bounds.max).default(bounds.default),
    offset: z.coerce.number().int().min(0).max(1_000_000).default(0),
  };
}

/** The fields a paged list answers with beside its items (`{ <items>: [...], ...pageFields }`). */
export const pageFields = {
  total: z.number().int(),
  limit: z.number().int(),
  offset: z.number().int(),
};
