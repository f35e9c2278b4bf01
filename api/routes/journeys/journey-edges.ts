/**
 * Journey friction edges (spec "Journey friction edge" and its four rules), pure.
 *
 * A session's path is its page views in time order; each pair of consecutive views is one crossing of the edge
 * from → to (a reload or a loop back to the same page has to = from). A signal belongs to the page view it
 * happened in: the latest view of the signal's page at or before it (or the first view of that page when the SDK
 * sent the signal before the view). A crossing collects the qualifying signals of both its views (the source page's
 * and the destination page's), so a signal counts on the edge into its view and on the edge out of it.
 */

export interface PathEvent {
  type: 'page_view' | 'signal';
  page: string;
  ts: number;
  signal?: string;
  selector?: string | null;
  /** 0..1; 1 when the SDK sent none. */
  confidence?: number;
}

export interface JourneyExample {
  session_id: string;
  page: string;
  signal_type: string;
  element_selector: string | null;
  occurred_at: string;
}

export interface JourneyEdge {
  from: string;
  to: string;
  sessions: number;
  friction_weight: number;
  signals: Record<string, number>;
  examples: JourneyExample[];
}

/** Most edges in a result and examples per edge (spec rule 4). */
export const MAX_JOURNEY_EDGES = 100;
export const MAX_EDGE_EXAMPLES = 5;

/** One edge's sums; its sets only once a signal crosses it (most edges carry none). */
interface Acc {
  from: string;
  to: string;
  weight: number;
  sessions?: Set<string>;
  signals?: Map<string, number>;
  examples?: JourneyExample[];
}

/**
 * Builds the edges of `sessions` (most recent first: examples come from the first sessions given).
 * `weightOf` is the catalog weight of a qualifying signal type and undefined for any other type.
 */
export function journeyFrictionEdges(
  sessions: readonly { id: string; events: readonly PathEvent[] }[],
  weightOf: (signalType: string) => number | undefined,
  minFrictionWeight: number,
): JourneyEdge[] {
  const edges = new Map<string, Acc>();
  for (const s of sessions) {
    const events = [...s.events].sort((a, b) => a.ts - b.ts);
    const views = events.filter((e) => e.type === 'page_view');
    if (views.length < 2) continue;
    const byView: PathEvent[][] = views.map(() => []);
    for (const e of events) {
      if (e.type !== 'signal' || e.signal === undefined || weightOf(e.signal) === undefined) continue;
      const i = viewOf(views, e);
      if (i >= 0) byView[i].push(e);
    }
    for (let i = 0; i + 1 < views.length; i++) {
      const from = views[i].page;
      const to = views[i + 1].page;
      const key = `${from}\u0000${to}`;
      let acc = edges.get(key);
      if (!acc) edges.set(key, (acc = { from, to, weight: 0 }));
      if (byView[i].length + byView[i + 1].length === 0) continue;
      (acc.sessions ??= new Set()).add(s.id);
      const signals = (acc.signals ??= new Map());
      const examples = (acc.examples ??= []);
      for (const sig of [...byView[i], ...byView[i + 1]]) {
        const type = sig.signal!;
        acc.weight += weightOf(type)! * clamp01(sig.confidence ?? 1);
        signals.set(type, (signals.get(type) ?? 0) + 1);
        if (examples.length < MAX_EDGE_EXAMPLES) {
          examples.push({
            session_id: s.id,
            page: sig.page,
            signal_type: type,
            element_selector: sig.selector ?? null,
            occurred_at: new Date(sig.ts).toISOString(),
          });
        }
      }
    }
  }
  // Most edges carry no signal (8,500 edges of 1,000 demo sessions at 1M events): the 100 kept are chosen on the
  // accumulators, and only they are presented.
  return [...edges.values()]
    .map((acc) => ({ acc, friction_weight: Math.round(acc.weight * 10) / 10 }))
    .filter((e) => e.friction_weight >= minFrictionWeight)
    .sort(
      (a, b) =>
        b.friction_weight - a.friction_weight ||
        (b.acc.sessions?.size ?? 0) - (a.acc.sessions?.size ?? 0) ||
        a.acc.from.localeCompare(b.acc.from) ||
        a.acc.to.localeCompare(b.acc.to),
    )
    .slice(0, MAX_JOURNEY_EDGES)
    .map(({ acc: a, friction_weight }) => ({
      from: a.from,
      to: a.to,
      sessions: a.sessions?.size ?? 0,
      friction_weight,
      signals: Object.fromEntries([...(a.signals ?? [])].sort(([x], [y]) => x.localeCompare(y))),
      examples: a.examples ?? [],
    }));
}

const clamp01 = (v: number): number => (Number.isFinite(v) ? Math.min(1, Math.max(0, v)) : 1);

/** Index of the view a signal belongs to, or -1 when the session never viewed the signal's page. */
function viewOf(views: readonly PathEvent[], sig: PathEvent): number {
  let first = -1;
  let latest = -1;
  for (let i = 0; i < views.length; i++) {
    if (views[i].page !== sig.page) continue;
    if (first < 0) first = i;
    if (views[i].ts <= sig.ts) latest = i;
  }
  return latest >= 0 ? latest : first;
}
