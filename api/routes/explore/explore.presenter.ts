import type { Environment } from '../../../shared/domain/deploy-verification.ts';
import { CONFUSING_SIGNALS, type ExploreScope } from '../../read-models/explore.fields.ts';
import type { SessionEventGroup, SessionRow } from '../../read-models/explore.queries.ts';
import { EXPLORE_MAX_SESSION_PAGES, type ExploreQuery, type ExploreSession } from '../../read-models/explore.schema.ts';

const CONFUSING = new Set(CONFUSING_SIGNALS);

/** Byte order of two strings, as `collate "C"` sorts them (UTF-16 order equals it for the BMP text we store). */
export const byteOrder = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** One listed session's summary from its row and its folded events (pure). */
export function presentSession(row: SessionRow, groups: readonly SessionEventGroup[]): ExploreSession {
  const firstVisit = new Map<string, number>();
  const signals: Record<string, number> = {};
  let confused = false;
  for (const g of groups) {
    const t = g.first_ms;
    const seen = firstVisit.get(g.page);
    if (seen === undefined || t < seen) firstVisit.set(g.page, t);
    if (g.type === 'signal' && g.signal !== null) {
      signals[g.signal] = (signals[g.signal] ?? 0) + g.n;
      if (CONFUSING.has(g.signal)) confused = true;
    }
  }
  const pages = [...firstVisit].sort((a, b) => a[1] - b[1] || byteOrder(a[0], b[0])).map(([p]) => p);
  return {
    session_id: row.id,
    first_seen: new Date(row.started_at).toISOString(),
    last_seen: new Date(row.last_seen_at).toISOString(),
    dwell_ms: Number(row.dwell_ms),
    page_views: row.page_views,
    pages: pages.slice(0, EXPLORE_MAX_SESSION_PAGES),
    page_count: pages.length,
    signals: Object.fromEntries(Object.entries(signals).sort((a, b) => byteOrder(a[0], b[0]))),
    confused,
    converted: row.conversions > 0,
    conversions: row.conversions,
    revenue: Number(row.revenue),
    source: row.source,
    device: row.device,
    app_version: row.app_version,
  };
}

/** What every answer starts with (the request it answers) and its meta (the window; rows_scanned is the route's). */
export function answerFrame(
  req: { siteId: string; environment: Environment; query: ExploreQuery },
  scope: ExploreScope,
) {
  const { query } = req;
  return {
    head: { site_id: req.siteId, environment: req.environment, query },
    meta: (truncated: boolean) => ({
      truncated,
      window: { days: query.window_days, from: scope.from.toISOString(), to: scope.to.toISOString() },
      rows_scanned: null,
    }),
  };
}
