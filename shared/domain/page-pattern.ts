import { z } from 'zod';

/**
 * Page patterns of alert rules: a path starting with `/`, optionally ending in one `*` that matches any
 * rest of the path (`/checkout*` matches `/checkout` and `/checkout/pay`), or `*` alone for every page. No other
 * wildcard: patterns stay predictable and cheap to match.
 */
export const PagePatternSchema = z
  .string()
  .max(2048)
  .regex(/^(\*|\/[^*]*\*?)$/, 'must be * or a path starting with / that may end in one * wildcard');

/** True when `page` (a path) matches `pattern`; a null pattern matches every page. */
export function matchesPagePattern(pattern: string | null, page: string): boolean {
  if (pattern === null) return true;
  return pattern.endsWith('*') ? page.startsWith(pattern.slice(0, -1)) : page === pattern;
}
