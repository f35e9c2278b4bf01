import type { z } from 'zod';
import type { SessionResponseSchema } from './session.schema.ts';
import { presentSessionId } from '../../http/present.ts';
import { SESSION_TIMELINE_MAX_EVENTS, type TimelineRow } from './session.queries.ts';

/**
 * A session timeline (spec "Session timeline"). The time of an event is `occurred_at` in the read API and
 * `timestamp` in the short form: every event carries both, so the two forms answer the same shape.
 * `page_count` counts distinct pages; `signal_count` the signal events.
 */
export function presentSession(
  sessionId: string,
  startedAt: Date,
  rows: TimelineRow[],
): z.output<typeof SessionResponseSchema> {
  const listed = rows.slice(0, SESSION_TIMELINE_MAX_EVENTS);
  const pages = new Set<string>();
  let signals = 0;
  const events = listed.map((r) => {
    pages.add(r.page);
    const at = r.ts.toISOString();
    if (r.type === 'signal') {
      signals++;
      return {
        type: 'signal' as const,
        signal: r.signal,
        selector: r.selector,
        page: r.page,
        occurred_at: at,
        timestamp: at,
      };
    }
    return { type: 'page_view' as const, selector: r.selector, page: r.page, occurred_at: at, timestamp: at };
  });
  return {
    session_id: presentSessionId(sessionId),
    page_count: pages.size,
    signal_count: signals,
    started_at: startedAt.toISOString(),
    events,
    truncated: rows.length > SESSION_TIMELINE_MAX_EVENTS,
  };
}
