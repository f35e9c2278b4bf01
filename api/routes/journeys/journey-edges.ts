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
  /** The first MAX_EDGE_EXAMPLES signals as (session, signal index): made examples only for the edges kept. */
  exampleSessions?: JourneySession[];
  exampleSignals?: number[];
}

/**
 * One session's path, column by column (no object per step): its page views in path order and its signals in time
 * order, times in epoch milliseconds. Signals of types `weightOf` does not weigh are ignored.
 */
export interface JourneySession {
  id: string;
  viewMs: readonly number[];
  viewPage: readonly string[];
  signalMs: readonly number[];
  signalPage: readonly string[];
  signalType: readonly string[];
  signalSelector: readonly (string | null)[];
  /** 0..1; null when the SDK sent none (weighs 1). */
  signalConfidence: readonly (number | null)[];
}

/** A session's events (any order; equal times keep their order) as its path: page views and signals, in time order. */
export function journeySession(id: string, events: readonly PathEvent[]): JourneySession {
  const sorted = [...events].sort((a, b) => a.ts - b.ts);
  const s = {
    id,
    viewMs: [] as number[],
    viewPage: [] as string[],
    signalMs: [] as number[],
    signalPage: [] as string[],
    signalType: [] as string[],
    signalSelector: [] as (string | null)[],
    signalConfidence: [] as (number | null)[],
  };
  for (const e of sorted) {
    if (e.type === 'page_view') {
      s.viewMs.push(e.ts);
      s.viewPage.push(e.page);
    } else if (e.signal !== undefined) {
      s.signalMs.push(e.ts);
      s.signalPage.push(e.page);
      s.signalType.push(e.signal);
      s.signalSelector.push(e.selector ?? null);
      s.signalConfidence.push(e.confidence ?? null);
    }
  }
  return s;
}

/**
 * Builds the edges of `sessions` (most recent first: examples come from the first sessions given).
 * `weightOf` is the catalog weight of a qualifying signal type and undefined for any other type.
 */
export function journeyFrictionEdges(
  sessions: readonly JourneySession[],
  weightOf: (signalType: string) => number | undefined,
  minFrictionWeight: number,
): JourneyEdge[] {
  // A crossing without a signal only creates its edge, of weight 0, with no session: kept only when the minimum lets
  // weight 0 through. Otherwise only the crossings into and out of a view with signals are visited.
  if (minFrictionWeight <= 0) return edgesOf(sessions, weightOf, minFrictionWeight, true)!;
  // Kept edges that tie on every sort key (weight, sessions, pages equal under localeCompare but different) keep the
  // order their first crossing gave them, which visiting only the signal crossings does not know: then every crossing.
  return edgesOf(sessions, weightOf, minFrictionWeight, false) ?? edgesOf(sessions, weightOf, minFrictionWeight, true)!;
}

function edgesOf(
  sessions: readonly JourneySession[],
  weightOf: (signalType: string) => number | undefined,
  minFrictionWeight: number,
  everyCrossing: boolean,
): JourneyEdge[] | undefined {
  const weights = new Map<string, number | undefined>();
  const weight = (type: string) => {
    if (!weights.has(type)) weights.set(type, weightOf(type));
    return weights.get(type);
  };
  const edges = new Map<string, Acc>();
  const add = (acc: Acc, s: JourneySession, list: number[]) => {
    for (const k of list) {
      const type = s.signalType[k];
      acc.weight += weight(type)! * clamp01(s.signalConfidence[k] ?? 1);
      acc.signals!.set(type, (acc.signals!.get(type) ?? 0) + 1);
      if (acc.exampleSignals!.length < MAX_EDGE_EXAMPLES) {
        acc.exampleSessions!.push(s);
        acc.exampleSignals!.push(k);
      }
    }
  };
  for (const s of sessions) {
    const { viewMs, viewPage } = s;
    const nViews = viewPage.length;
    if (nViews < 2) continue;
    // The signals of each view, in time order (most views have none).
    const byView: (number[] | undefined)[] = new Array(nViews);
    let firstWithSignals = nViews;
    for (let k = 0; k < s.signalType.length; k++) {
      if (weight(s.signalType[k]) === undefined) continue;
      const i = viewOf(viewMs, viewPage, s.signalPage[k], s.signalMs[k]);
      if (i < 0) continue;
      (byView[i] ??= []).push(k);
      if (i < firstWithSignals) firstWithSignals = i;
    }
    for (let i = everyCrossing ? 0 : Math.max(0, firstWithSignals - 1); i + 1 < nViews; i++) {
      const a = byView[i];
      const b = byView[i + 1];
      if (!everyCrossing && a === undefined && b === undefined) continue;
      const from = viewPage[i];
      const to = viewPage[i + 1];
      const key = `${from}\u0000${to}`;
      let acc = edges.get(key);
      if (!acc) edges.set(key, (acc = { from, to, weight: 0 }));
      if (a === undefined && b === undefined) continue;
      (acc.sessions ??= new Set()).add(s.id);
      acc.signals ??= new Map();
      acc.exampleSessions ??= [];
      acc.exampleSignals ??= [];
      if (a !== undefined) add(acc, s, a);
      if (b !== undefined) add(acc, s, b);
    }
  }
  // Most edges carry no signal (8,500 edges of 1,000 demo sessions at 1M events), and of those kept only the 100
  // heaviest are answered: a stable sort on the numbers first, then the full order (pages by localeCompare) among the
  // first 100 and those tied with the 100th, which is where the answer's 100 come from; only they are presented.
  const kept: { acc: Acc; friction_weight: number; sessions: number }[] = [];
  for (const acc of edges.values()) {
    const friction_weight = Math.round(acc.weight * 10) / 10;
    if (friction_weight >= minFrictionWeight) kept.push({ acc, friction_weight, sessions: acc.sessions?.size ?? 0 });
  }
  kept.sort((a, b) => b.friction_weight - a.friction_weight || b.sessions - a.sessions);
  let end = Math.min(MAX_JOURNEY_EDGES, kept.length);
  while (
    end < kept.length &&
    kept[end].friction_weight === kept[end - 1].friction_weight &&
    kept[end].sessions === kept[end - 1].sessions
  )
    end++;
  let tie = false;
  const top = kept.slice(0, end).sort((a, b) => {
    const c =
      b.friction_weight - a.friction_weight ||
      b.sessions - a.sessions ||
      a.acc.from.localeCompare(b.acc.from) ||
      a.acc.to.localeCompare(b.acc.to);
    if (c === 0) tie = true;
    return c;
  });
  if (tie && !everyCrossing) return undefined;
  return top.slice(0, MAX_JOURNEY_EDGES).map(({ acc: a, friction_weight, sessions }) => ({
    from: a.from,
    to: a.to,
    sessions,
    friction_weight,
    signals: Object.fromEntries([...(a.signals ?? [])].sort(([x], [y]) => x.localeCompare(y))),
    examples: (a.exampleSignals ?? []).map((k, i) => {
      const s = a.exampleSessions![i];
      return {
        session_id: s.id,
        page: s.signalPage[k],
        signal_type: s.signalType[k],
        element_selector: s.signalSelector[k] ?? null,
        occurred_at: new Date(s.signalMs[k]).toISOString(),
      };
    }),
  }));
}

const clamp01 = (v: number): number => (Number.isFinite(v) ? Math.min(1, Math.max(0, v)) : 1);

/** Index of the view a signal belongs to, or -1 when the session never viewed the signal's page. */
function viewOf(viewMs: readonly number[], viewPage: readonly string[], page: string, ms: number): number {
  let first = -1;
  let latest = -1;
  for (let i = 0; i < viewPage.length; i++) {
    if (viewPage[i] !== page) continue;
    if (first < 0) first = i;
    if (viewMs[i] <= ms) latest = i;
  }
  return latest >= 0 ? latest : first;
}
