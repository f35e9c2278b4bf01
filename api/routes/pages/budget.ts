import { matchesPagePattern } from '../../../shared/domain/page-pattern.ts';

export interface PageBudget {
  /** The strictest (lowest) threshold of the enabled budget rules matching the page; null when none does. */
  limit: number | null;
  /** The page's current score. */
  current: number;
  /** True when a limit exists and the current score is above it. */
  exceeded: boolean;
}

/** The page's score budget from the site's enabled budget rules (pure). */
export function pageBudget(
  rules: readonly { threshold: number; page_pattern: string | null }[],
  page: string,
  current: number,
): PageBudget {
  let limit: number | null = null;
  for (const r of rules) {
    if (matchesPagePattern(r.page_pattern, page) && (limit === null || r.threshold < limit)) limit = r.threshold;
  }
  return { limit, current, exceeded: limit !== null && current > limit };
}
